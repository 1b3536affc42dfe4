// MNF/PCA device kernels on a synthetic int16 tile (default 2048 lines x 677 samples x
// 224 bands, one halo row each side), each kernel and variant timed with CUDA events
// after a warm-up, against the floors given on the command line (defaults: H200 HBM
// 3.5 TB/s read+write, DGEMM 61 TFLOP/s, SGEMM 50 TFLOP/s). Prints an aligned table,
// or JSON with --json; "ms@scale" is the time scaled to --scale-lines (a flight line).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernels/mnf/moments.cuh"
#include "kernels/mnf/syrk.cuh"
#include "kernels/mnf/transform.cuh"

namespace {

using namespace hb::kernels::mnf;

#define CHECK(x)                                                                          \
  do {                                                                                    \
    if (!ok(x)) {                                                                         \
      std::fprintf(stderr, "%s:%d failed: %s\n", __FILE__, __LINE__, #x);                 \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

bool ok(cudaError_t e) { return e == cudaSuccess; }
bool ok(const LaunchStatus& s) {
  if (!s.ok()) std::fprintf(stderr, "%s\n", s.message().c_str());
  return s.ok();
}

struct Options {
  long lines = 2048, samples = 677, bands = 224, components = 30, kept = 10, reps = 10, scale_lines = 16384;
  double hbm_gbps = 3500, dgemm_tflops = 61, sgemm_tflops = 50;
  bool json = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? argv[++i] : (std::fprintf(stderr, "%s needs a value\n", a.c_str()), std::exit(2), argv[0]); };
    if (a == "--json") o.json = true;
    else if (a == "--lines") o.lines = std::atol(next());
    else if (a == "--samples") o.samples = std::atol(next());
    else if (a == "--bands") o.bands = std::atol(next());
    else if (a == "--components") o.components = std::atol(next());
    else if (a == "--reps") o.reps = std::atol(next());
    else if (a == "--scale-lines") o.scale_lines = std::atol(next());
    else if (a == "--hbm-gbps") o.hbm_gbps = std::atof(next());
    else if (a == "--dgemm-tflops") o.dgemm_tflops = std::atof(next());
    else if (a == "--sgemm-tflops") o.sgemm_tflops = std::atof(next());
    else {
      std::fprintf(stderr, "usage: %s [--json] [--lines N] [--samples N] [--bands N] [--components M] [--reps N]\n"
                           "  [--scale-lines N] [--hbm-gbps X] [--dgemm-tflops X] [--sgemm-tflops X]\n", argv[0]);
      std::exit(2);
    }
  }
  return o;
}

// Spectra-like int16 samples with a pseudo-random texture; one pixel in 997 is fill.
__global__ void synth_tile(short* tile, long long pixels, int bands) {
  for (long long e = blockIdx.x * 1ll * blockDim.x + threadIdx.x; e < pixels * bands; e += 1ll * gridDim.x * blockDim.x) {
    const long long p = e / bands;
    const unsigned h = static_cast<unsigned>(e) * 2654435761u ^ static_cast<unsigned>(p) * 40503u;
    const int b = static_cast<int>(e % bands);
    tile[e] = p % 997 == 5 && b == 3 ? short(-9999) : static_cast<short>(1000 + 4 * b + (h >> 24) + (p % 677));
  }
}

template <class T>
T* device_alloc(std::size_t n) {
  void* p = nullptr;
  CHECK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T)));
  return static_cast<T*>(p);
}

struct Row {
  std::string kernel, variant;
  double ms = 0, bytes = 0, flops = 0, peak_tflops = 0;
};

double time_ms(const std::function<void()>& f, int reps) {
  f();  // warm-up (also first-call cuBLAS set-up)
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  CHECK(cudaEventRecord(a));
  for (int i = 0; i < reps; ++i) f();
  CHECK(cudaEventRecord(b));
  CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return ms / reps;
}

void print(const Options& o, const std::vector<Row>& rows, const char* device) {
  const double scale = double(o.scale_lines) / double(o.lines);
  auto floor_pct = [&](const Row& r) {
    const double mem_ms = r.bytes / (o.hbm_gbps * 1e9) * 1e3;
    const double flop_ms = r.peak_tflops > 0 ? r.flops / (r.peak_tflops * 1e12) * 1e3 : 0.0;
    return 100.0 * std::max(mem_ms, flop_ms) / r.ms;
  };
  if (o.json) {
    std::printf("{\"device\": \"%s\", \"lines\": %ld, \"samples\": %ld, \"bands\": %ld, \"components\": %ld, "
                "\"scale_lines\": %ld, \"floors\": {\"hbm_gbps\": %g, \"dgemm_tflops\": %g, \"sgemm_tflops\": %g}, "
                "\"rows\": [",
                device, o.lines, o.samples, o.bands, o.components, o.scale_lines, o.hbm_gbps, o.dgemm_tflops,
                o.sgemm_tflops);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::printf("%s{\"kernel\": \"%s\", \"variant\": \"%s\", \"ms\": %.4f, \"ms_scaled\": %.3f, \"gb_per_s\": %.1f, "
                  "\"gflop_per_s\": %.1f, \"pct_of_floor\": %.1f}",
                  i ? ", " : "", r.kernel.c_str(), r.variant.c_str(), r.ms, r.ms * scale, r.bytes / r.ms / 1e6,
                  r.flops / r.ms / 1e6, floor_pct(r));
    }
    std::printf("]}\n");
    return;
  }
  std::printf("# %s: int16 tile %ld lines x %ld samples x %ld bands, %ld components; floors: HBM %.0f GB/s, "
              "DGEMM %.0f TFLOP/s, SGEMM %.0f TFLOP/s\n",
              device, o.lines, o.samples, o.bands, o.components, o.hbm_gbps, o.dgemm_tflops, o.sgemm_tflops);
  std::printf("%-18s %-22s %10s %12s %10s %12s %9s\n", "kernel", "variant", "ms", "ms@scale", "GB/s", "GFLOP/s",
              "%floor");
  for (const Row& r : rows)
    std::printf("%-18s %-22s %10.3f %12.2f %10.1f %12.1f %8.1f%%\n", r.kernel.c_str(), r.variant.c_str(), r.ms,
                r.ms * scale, r.bytes / r.ms / 1e6, r.flops / r.ms / 1e6, floor_pct(r));
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int nb = static_cast<int>(o.bands), m = static_cast<int>(o.components), k = static_cast<int>(o.kept);
  const long long held_pixels = (o.lines + 2) * o.samples, n = o.lines * o.samples;

  TileView tile;
  tile.type = hb::DataType::i16;
  tile.samples = o.samples;
  tile.bands = o.bands;
  tile.lines = o.lines + 2;
  tile.held_row0 = 0;
  tile.held_rows = o.lines + 2;
  tile.core_row0 = 1;
  tile.core_rows = o.lines;
  short* raw = device_alloc<short>(std::size_t(held_pixels) * nb);
  synth_tile<<<4096, 256>>>(raw, held_pixels, nb);
  tile.data = raw;
  std::vector<int> good(static_cast<std::size_t>(nb));
  for (int b = 0; b < nb; ++b) good[std::size_t(b)] = b;
  int* d_good = device_alloc<int>(good.size());
  CHECK(cudaMemcpy(d_good, good.data(), good.size() * sizeof(int), cudaMemcpyHostToDevice));
  const PixelRules rules{d_good, nb, true, -9999.0};

  std::vector<double> host_mean(static_cast<std::size_t>(nb));
  for (int b = 0; b < nb; ++b) host_mean[std::size_t(b)] = 1100.0 + 4.0 * b;
  std::vector<float> host_T(std::size_t(nb) * m), host_Tinv(std::size_t(k) * nb);
  for (std::size_t i = 0; i < host_T.size(); ++i) host_T[i] = float((i * 7919 % 101) - 50) * 1e-3f;
  for (std::size_t i = 0; i < host_Tinv.size(); ++i) host_Tinv[i] = float((i * 104729 % 97) - 48) * 1e-2f;
  double* mean = device_alloc<double>(host_mean.size());
  float* T = device_alloc<float>(host_T.size());
  float* Tinv = device_alloc<float>(host_Tinv.size());
  CHECK(cudaMemcpy(mean, host_mean.data(), host_mean.size() * 8, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(T, host_T.data(), host_T.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(Tinv, host_Tinv.data(), host_Tinv.size() * 4, cudaMemcpyHostToDevice));

  auto* valid = device_alloc<std::uint8_t>(std::size_t(held_pixels));
  double* M = device_alloc<double>(std::size_t(n) * nb);
  float* Xf = device_alloc<float>(std::size_t(n) * nb);  // SGEMM workspace, then denoise output
  float* Z = device_alloc<float>(std::size_t(n) * m);
  auto* count = device_alloc<unsigned long long>(1);
  double* sum = device_alloc<double>(std::size_t(nb));
  double* cross = device_alloc<double>(std::size_t(nb) * nb);
  const std::size_t moments_ws = moments_workspace_bytes(n, nb), syrk_ws = syrk_tiled_workspace_bytes(n, nb);
  void* ws = device_alloc<std::byte>(std::max(moments_ws, syrk_ws));
  const DeviceMoments dm{count, sum, cross};
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 1;

  const double raw_b = double(n) * nb * 2, mat_b = double(n) * nb * 8, f32_b = double(n) * nb * 4,
               z_b = double(n) * m * 4, syrk_f = double(n) * nb * (nb + 1), gemm_f = 2.0 * n * nb * m;
  const int reps = static_cast<int>(o.reps);
  std::vector<Row> rows;
  auto add = [&](const char* kernel, const char* variant, double bytes, double flops, double peak,
                 const std::function<void()>& f) {
    rows.push_back({kernel, variant, time_ms(f, reps), bytes, flops, peak});
  };
  add("exclusion_mask", "warp per pixel", double(held_pixels) * nb * 2 + held_pixels, 0, 0,
      [&] { CHECK(exclusion_mask(tile, rules, valid, nullptr)); });
  add("convert_center", "f64, 2-stage sums", raw_b + mat_b + n, 0, 0,
      [&] { CHECK(convert_center_f64(tile, rules, valid, mean, M, dm, ws, moments_ws, nullptr)); });
  const std::pair<NoiseEstimator, const char*> estimators[] = {
      {estimator_id<DiffNoise>(), "diff"}, {estimator_id<Mean3x3Noise>(), "mean3x3"}, {estimator_id<Median3x3Noise>(), "median3x3"}};
  for (const auto& [e, name] : estimators)
    add("noise_residuals", name, raw_b + mat_b + n, 0, 0, [&, e = e] {
      CHECK(noise_residuals_f64(tile, rules, valid, e, NoiseWindow{}, M, dm, ws, moments_ws, nullptr));
    });
  add("cross_product", "cuBLAS DSYRK", mat_b, syrk_f, o.dgemm_tflops,
      [&] { CHECK(syrk_cublas(handle, M, n, nb, cross, nullptr)); });
  add("cross_product", "hand SYRK (DMMA)", mat_b, syrk_f, o.dgemm_tflops,
      [&] { CHECK(syrk_tiled(M, n, nb, cross, ws, syrk_ws, nullptr)); });
  TransformOptions topt;
  add("transform", "center_f32 only", raw_b + f32_b + n, 0, 0,
      [&] { CHECK(center_f32(tile, rules, valid, mean, Xf, nullptr)); });
  add("transform", "SGEMM (L, total)", raw_b + 2 * f32_b + 3 * z_b + 2 * n, gemm_f, o.sgemm_tflops, [&] {
    CHECK(transform_sgemm(handle, tile, rules, valid, mean, T, m, Z, topt, Xf, std::size_t(f32_b), nullptr));
  });
  if (transform_const_fits(nb, m)) {
    CHECK(transform_const_upload(T, mean, nullptr, nb, m, nullptr));
    add("transform", "constant memory (C)", raw_b + z_b + n, gemm_f, o.sgemm_tflops,
        [&] { CHECK(transform_const(tile, rules, valid, m, Z, topt.fill, nullptr)); });
  }
  add("denoise", "SGEMM + mean", double(n) * k * 4 + 3 * f32_b + n, 2.0 * n * k * nb, o.sgemm_tflops, [&] {
    CHECK(denoise_sgemm(handle, Z, n, m, k, Tinv, nb, mean, valid + o.samples, Xf, topt, nullptr));
  });
  CHECK(cudaDeviceSynchronize());
  print(o, rows, prop.name);
  cublasDestroy(handle);
  for (void* p : {static_cast<void*>(raw), static_cast<void*>(d_good), static_cast<void*>(mean),
                  static_cast<void*>(T), static_cast<void*>(Tinv), static_cast<void*>(valid), static_cast<void*>(M),
                  static_cast<void*>(Xf), static_cast<void*>(Z), static_cast<void*>(count), static_cast<void*>(sum),
                  static_cast<void*>(cross), ws})
    cudaFree(p);
  return 0;
}
