// The floors every other benchmark is measured against, taken on the machine at hand:
// pinned host-to-device bandwidth, device copy bandwidth (read + write), and the
// cuBLAS DGEMM / SGEMM rates. Prints one aligned table and, with --json, JSON.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/timing.cuh"

namespace {

struct Row {
  std::string what;
  double value;
  std::string unit;
};

using hb::bench::time_ms;

double h2d_gbps(std::size_t bytes) {
  void *host, *dev;
  CHECK_CUDA(cudaMallocHost(&host, bytes));
  CHECK_CUDA(cudaMalloc(&dev, bytes));
  std::memset(host, 1, bytes);
  double ms = time_ms([&] { CHECK_CUDA(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice)); }, 10);
  CHECK_CUDA(cudaFreeHost(host));
  CHECK_CUDA(cudaFree(dev));
  return bytes / ms / 1e6;
}

double d2d_gbps(std::size_t bytes) {
  void *a, *b;
  CHECK_CUDA(cudaMalloc(&a, bytes));
  CHECK_CUDA(cudaMalloc(&b, bytes));
  CHECK_CUDA(cudaMemset(a, 1, bytes));
  double ms = time_ms([&] { CHECK_CUDA(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice)); }, 20);
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  return 2.0 * bytes / ms / 1e6;  // read + write
}

template <class T>
double gemm_tflops(cublasHandle_t handle, int n) {
  T *a, *b, *c;
  const std::size_t bytes = sizeof(T) * std::size_t(n) * n;
  CHECK_CUDA(cudaMalloc(&a, bytes));
  CHECK_CUDA(cudaMalloc(&b, bytes));
  CHECK_CUDA(cudaMalloc(&c, bytes));
  CHECK_CUDA(cudaMemset(a, 0, bytes));
  CHECK_CUDA(cudaMemset(b, 0, bytes));
  const T one = 1, zero = 0;
  double ms = time_ms(
      [&] {
        if constexpr (sizeof(T) == 8)
          cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
        else
          cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
      },
      10);
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFree(c));
  return 2.0 * n * double(n) * n / ms / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const bool json = argc > 1 && std::strcmp(argv[1], "--json") == 0;
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  cublasHandle_t handle;
  cublasCreate(&handle);
  std::vector<Row> rows{
      {"pinned host-to-device copy", h2d_gbps(std::size_t(1) << 30), "GB/s"},
      {"device copy (read+write)", d2d_gbps(std::size_t(2) << 30), "GB/s"},
      {"DGEMM n=8192", gemm_tflops<double>(handle, 8192), "TFLOP/s"},
      {"SGEMM n=8192", gemm_tflops<float>(handle, 8192), "TFLOP/s"},
  };
  cublasDestroy(handle);
  if (json) {
    std::printf("{\"device\": \"%s\"", prop.name);
    for (const auto& r : rows) std::printf(", \"%s\": %.2f", r.what.c_str(), r.value);
    std::printf("}\n");
  } else {
    std::printf("# floors on %s\n# %-30s %12s %s\n", prop.name, "what", "value", "unit");
    for (const auto& r : rows) std::printf("  %-30s %12.2f %s\n", r.what.c_str(), r.value, r.unit.c_str());
  }
  return 0;
}
