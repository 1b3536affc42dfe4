// Error plumbing shared by the CUDA KNN files: CUDA and cuBLAS codes become Status
// values (out of device memory is ErrorKind::resource, anything else internal).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "src/base/error.hpp"

namespace hb::knn {

inline Error cuda_failure(cudaError_t code, const char* what) {
  cudaGetLastError();  // clear a sticky-free error so the next call starts clean
  const ErrorKind kind = code == cudaErrorMemoryAllocation ? ErrorKind::resource : ErrorKind::internal;
  return Error{kind, {}, "knn", std::string(what) + ": " + cudaGetErrorString(code)};
}

inline Error cublas_failure(cublasStatus_t code, const char* what) {
  const ErrorKind kind = code == CUBLAS_STATUS_ALLOC_FAILED ? ErrorKind::resource : ErrorKind::internal;
  return Error{kind, {}, "knn", std::string(what) + ": " + cublasGetStatusString(code)};
}

inline Status require_cuda_device(int device) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return Error{ErrorKind::resource, {}, "--backend", "no CUDA device is visible"};
  }
  if (device < 0 || device >= count)
    return Error{ErrorKind::resource, {}, "--device", "GPU " + std::to_string(device) + " does not exist"};
  return {};
}

}  // namespace hb::knn

#define HB_CUDA_TRY(expr, what)                                                         \
  do {                                                                                  \
    if (const cudaError_t hb_cuda_code_ = (expr); hb_cuda_code_ != cudaSuccess)         \
      return ::hb::knn::cuda_failure(hb_cuda_code_, what);                              \
  } while (0)

#define HB_CUBLAS_TRY(expr, what)                                                           \
  do {                                                                                      \
    if (const cublasStatus_t hb_cublas_code_ = (expr); hb_cublas_code_ != CUBLAS_STATUS_SUCCESS) \
      return ::hb::knn::cublas_failure(hb_cublas_code_, what);                              \
  } while (0)
