// SAM / SCM scoring through the production seam (src/sam/scorer.hpp) on one GPU: a
// synthetic int16 tile (default 1024 lines x 677 samples x 224 bands, in pinned memory
// as the scene reader gives it) against libraries of --counts spectra, each formulation
// (direct: references in constant or global memory; dgemm), timed after a warm-up.
// A tile's time includes the host->device copy of its raw bytes and the copy back of
// the best matches (no per-class scores). Floors per tile: the PCIe copy of the raw
// bytes (--h2d-gbps), one HBM read of them (--hbm-gbps) and the FP64 dot products at
// the DGEMM rate (--dgemm-tflops). Prints an aligned table, rates per pixel.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "src/sam/scorer.hpp"

namespace {

using namespace hb;

struct Options {
  long lines = 1024, samples = 677, bands = 224, reps = 5;
  std::vector<long> counts{4, 10, 35, 64, 100, 300, 1000};
  double h2d_gbps = 55, hbm_gbps = 3500, dgemm_tflops = 61;
};

std::vector<long> parse_list(const std::string& text) {
  std::vector<long> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::atol(item.c_str()));
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const char* v = argv[i + 1];
    if (a == "--lines") o.lines = std::atol(v);
    else if (a == "--samples") o.samples = std::atol(v);
    else if (a == "--bands") o.bands = std::atol(v);
    else if (a == "--reps") o.reps = std::atol(v);
    else if (a == "--counts") o.counts = parse_list(v);
    else if (a == "--h2d-gbps") o.h2d_gbps = std::atof(v);
    else if (a == "--hbm-gbps") o.hbm_gbps = std::atof(v);
    else if (a == "--dgemm-tflops") o.dgemm_tflops = std::atof(v);
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      std::exit(2);
    }
  }
  return o;
}

void fail(const Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, s.error().line().c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (cuda_device_count() == 0) {
    std::printf("no CUDA device\n");
    return 0;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  auto probe = sam::make_sam_scorer(BackendKind::cuda, sam::Formulation::direct);
  fail(probe.ok() ? Status{} : Status{probe.error()}, "scorer");
  io::Tile tile(DataType::i16, o.samples, o.bands, {0, o.lines}, {0, o.lines}, (*probe)->host_allocator());
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> dn(200, 6000);
  for (auto& v : tile.as<std::int16_t>()) v = static_cast<std::int16_t>(dn(rng));
  sam::PixelBands bands;
  for (long b = 0; b < o.bands; ++b) bands.bands.push_back(b);
  const double pixels = static_cast<double>(o.lines * o.samples);
  const double bytes = static_cast<double>(tile.bytes().size());
  std::printf("# SAM scoring on %s: tile %ld x %ld x %ld int16 (%.0f MB), %ld reps after a warm-up\n", prop.name,
              o.lines, o.samples, o.bands, bytes / 1e6, o.reps);
  std::printf("# floors: h2d %.0f GB/s, hbm %.0f GB/s, dgemm %.0f TFLOP/s\n", o.h2d_gbps, o.hbm_gbps, o.dgemm_tflops);
  std::printf("%8s %-24s %10s %12s %10s %10s %10s\n", "spectra", "formulation", "ms/tile", "Mpixel/s", "h2d_ms",
              "hbm_ms", "fp64_ms");
  for (const long count : o.counts) {
    std::vector<double> spectra(static_cast<std::size_t>(count * o.bands));
    for (auto& v : spectra) v = dn(rng);
    std::vector<std::string> names(static_cast<std::size_t>(count), "s");
    auto refs = sam::prepare_references(sam::Method::sam, spectra, o.bands, names, "bench");
    fail(refs.ok() ? Status{} : Status{refs.error()}, "references");
    for (const auto formulation : {sam::Formulation::direct, sam::Formulation::gemm}) {
      auto scorer = sam::make_sam_scorer(BackendKind::cuda, formulation);
      fail(scorer.ok() ? Status{} : Status{scorer.error()}, "scorer");
      fail((*scorer)->set_references(*refs), "set_references");
      sam::TileScores out;
      fail((*scorer)->score(tile, bands, false, out), "warm-up");
      const auto start = std::chrono::steady_clock::now();
      for (long r = 0; r < o.reps; ++r) fail((*scorer)->score(tile, bands, false, out), "score");
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / static_cast<double>(o.reps);
      const double flops = 2.0 * pixels * static_cast<double>(o.bands) * static_cast<double>(count);
      std::printf("%8ld %-24s %10.3f %12.1f %10.3f %10.3f %10.3f\n", count, (*scorer)->formulation().c_str(), ms,
                  pixels / ms / 1e3, bytes / o.h2d_gbps / 1e6, bytes / o.hbm_gbps / 1e6, flops / o.dgemm_tflops / 1e9);
    }
  }
  return 0;
}
