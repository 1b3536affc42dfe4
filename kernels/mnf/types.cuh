// Shared vocabulary of the MNF/PCA device kernels: what a raw tile in device memory
// looks like, which pixels count, where moments accumulate, and what a launcher
// reports. Host-only declarations: includable from plain C++ (g++) translation units.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <string>

#include "src/base/data_type.hpp"

namespace hb::kernels::mnf {

// A tile of raw samples in device memory, canonical layout: held_rows x samples pixels,
// each `bands` contiguous samples (BIP), native byte order, type `type`. Rows are scene
// rows; core ⊂ held; the halo rows around the core are read by noise estimators only.
struct TileView {
  DataType type = DataType::i16;
  const void* data = nullptr;
  std::int64_t samples = 0;
  std::int64_t bands = 0;
  std::int64_t lines = 0;  // scene lines: where the scene's edges are
  std::int64_t held_row0 = 0;
  std::int64_t held_rows = 0;
  std::int64_t core_row0 = 0;
  std::int64_t core_rows = 0;

  std::int64_t held_pixels() const { return held_rows * samples; }
  std::int64_t core_pixels() const { return core_rows * samples; }
  // Index of the first core pixel among the held pixels.
  std::int64_t core_offset() const { return (core_row0 - held_row0) * samples; }
};

// Which bands the statistics see and which pixels are excluded. A pixel is excluded
// when any good band is non-finite or, with has_ignore, equals ignore_value; the test
// is done on the sample widened to double (as the CPU backend does).
struct PixelRules {
  const int* good_bands = nullptr;  // device [nb], indices into [0, bands), ascending
  int nb = 0;
  bool has_ignore = false;
  double ignore_value = 0.0;
};

// Moments accumulated on the device; every kernel ADDS to them (beta = 1), so a run
// zeroes them once and feeds every tile. cross is row-major [nb x nb] and only its
// upper triangle (column >= row) is written, as in the CPU mnf::Moments.
struct DeviceMoments {
  unsigned long long* count = nullptr;  // device [1]
  double* sum = nullptr;                // device [nb]
  double* cross = nullptr;              // device [nb x nb]
};

// Rows [row_begin, row_end) x columns [col_begin, col_end) of the scene: a residual is
// skipped when any pixel it reads lies outside (the CPU's mnf::Window, --subset).
struct NoiseWindow {
  std::int64_t row_begin = std::numeric_limits<std::int64_t>::min();
  std::int64_t row_end = std::numeric_limits<std::int64_t>::max();
  std::int64_t col_begin = std::numeric_limits<std::int64_t>::min();
  std::int64_t col_end = std::numeric_limits<std::int64_t>::max();
};

// What a launcher reports: success, a CUDA error, a cuBLAS error, or an argument the
// launcher refused before enqueuing anything (`bad_argument` names it).
struct [[nodiscard]] LaunchStatus {
  cudaError_t cuda = cudaSuccess;
  cublasStatus_t cublas = CUBLAS_STATUS_SUCCESS;
  const char* bad_argument = nullptr;

  bool ok() const { return cuda == cudaSuccess && cublas == CUBLAS_STATUS_SUCCESS && !bad_argument; }
  explicit operator bool() const { return ok(); }
  std::string message() const;  // one line, for hb::Error

  static LaunchStatus from(cudaError_t e) { return {e, CUBLAS_STATUS_SUCCESS, nullptr}; }
  static LaunchStatus from(cublasStatus_t s) { return {cudaSuccess, s, nullptr}; }
  static LaunchStatus invalid(const char* what) { return {cudaErrorInvalidValue, CUBLAS_STATUS_SUCCESS, what}; }
};

}  // namespace hb::kernels::mnf
