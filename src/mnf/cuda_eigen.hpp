// Symmetric eigendecomposition on the GPU with cuSOLVER (dsyevd), returned in the
// same descending, sign-normalised form as linalg::symmetric_eigen so that the CPU
// and CUDA bases agree to rounding (tests/src/mnf/test_mnf_backends.cpp).
#pragma once

#include "src/base/error.hpp"
#include "src/linalg/eigen.hpp"

namespace hb::cuda {

// Keeps its cuSOLVER handle between calls: creating one costs tens of milliseconds, as
// much as the decomposition of a 224-band matrix itself.
class DeviceEigenSolver {
 public:
  explicit DeviceEigenSolver(int device) : device_(device) {}
  ~DeviceEigenSolver();
  DeviceEigenSolver(const DeviceEigenSolver&) = delete;
  DeviceEigenSolver& operator=(const DeviceEigenSolver&) = delete;

  Result<linalg::SymmetricEigen> solve(const linalg::Matrix& a);

 private:
  int device_;
  void* handle_ = nullptr;  // cusolverDnHandle_t, created on first use
};

}  // namespace hb::cuda
