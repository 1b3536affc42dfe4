#include "src/mnf/cuda_eigen.hpp"

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cmath>
#include <string>
#include <vector>

namespace hb::cuda {
namespace {

// Frees what it holds on every exit path.
struct SolverResources {
  double* matrix = nullptr;
  double* values = nullptr;
  double* work = nullptr;
  int* info = nullptr;
  ~SolverResources() {
    cudaFree(matrix);
    cudaFree(values);
    cudaFree(work);
    cudaFree(info);
  }
};

Error solver_error(const std::string& what) { return Error{ErrorKind::resource, {}, {}, "cuSOLVER eigendecomposition: " + what}; }

}  // namespace

DeviceEigenSolver::~DeviceEigenSolver() {
  if (handle_ != nullptr) cusolverDnDestroy(static_cast<cusolverDnHandle_t>(handle_));
}

Result<linalg::SymmetricEigen> DeviceEigenSolver::solve(const linalg::Matrix& a) {
  const int device = device_;
  if (a.rows != a.cols) return Error{ErrorKind::internal, {}, {}, "eigendecomposition of a non-square matrix"};
  const int n = static_cast<int>(a.rows);
  if (n == 0) return linalg::SymmetricEigen{};
  for (double x : a.data)
    if (!std::isfinite(x)) return Error{ErrorKind::bad_input, {}, {}, "matrix to decompose has non-finite entries"};
  if (cudaSetDevice(device) != cudaSuccess) return solver_error("cannot select the GPU");

  if (handle_ == nullptr) {
    cusolverDnHandle_t created = nullptr;
    if (cusolverDnCreate(&created) != CUSOLVER_STATUS_SUCCESS) return solver_error("cannot create a handle");
    handle_ = created;
  }
  const auto handle = static_cast<cusolverDnHandle_t>(handle_);
  SolverResources r;
  const auto bytes = static_cast<std::size_t>(n) * n * sizeof(double);
  if (cudaMalloc(&r.matrix, bytes) != cudaSuccess || cudaMalloc(&r.values, n * sizeof(double)) != cudaSuccess ||
      cudaMalloc(&r.info, sizeof(int)) != cudaSuccess)
    return solver_error("out of device memory");
  // Row-major upper triangle = column-major lower triangle (as on the LAPACK path).
  if (cudaMemcpy(r.matrix, a.data.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess)
    return solver_error("copy to device failed");
  int lwork = 0;
  const auto mode = CUSOLVER_EIG_MODE_VECTOR;
  const auto fill = CUBLAS_FILL_MODE_LOWER;
  if (cusolverDnDsyevd_bufferSize(handle, mode, fill, n, r.matrix, n, r.values, &lwork) != CUSOLVER_STATUS_SUCCESS)
    return solver_error("workspace query failed");
  if (cudaMalloc(&r.work, static_cast<std::size_t>(lwork) * sizeof(double)) != cudaSuccess)
    return solver_error("out of device memory for the workspace");
  if (cusolverDnDsyevd(handle, mode, fill, n, r.matrix, n, r.values, r.work, lwork, r.info) !=
      CUSOLVER_STATUS_SUCCESS)
    return solver_error("dsyevd failed to launch");

  int info = 0;
  std::vector<double> ascending(static_cast<std::size_t>(n));
  std::vector<double> vectors(static_cast<std::size_t>(n) * n);
  if (cudaMemcpy(&info, r.info, sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess ||
      cudaMemcpy(ascending.data(), r.values, n * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess ||
      cudaMemcpy(vectors.data(), r.matrix, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
    return solver_error("copy from device failed");
  if (info != 0)
    return Error{ErrorKind::internal, {}, {}, "cusolverDnDsyevd failed with info " + std::to_string(info)};
  return linalg::descending_eigen(n, ascending, vectors);
}

}  // namespace hb::cuda
