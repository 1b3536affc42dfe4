// The one place where CUDA, cuBLAS and cuSOLVER status codes become Status values: out
// of device memory is ErrorKind::resource (the run may fit with a smaller tile or on
// another device), anything else ErrorKind::internal. Include from .cu/.cpp files that
// are built with CUDA only.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <string>

#include "src/base/error.hpp"

namespace hb::cuda {

inline Error failure(cudaError_t code, const std::string& what) {
  cudaGetLastError();  // clear a non-sticky error so that the next call starts clean
  const ErrorKind kind = code == cudaErrorMemoryAllocation ? ErrorKind::resource : ErrorKind::internal;
  return Error{kind, {}, "cuda", what + ": " + cudaGetErrorString(code)};
}

inline Error failure(cublasStatus_t code, const std::string& what) {
  const ErrorKind kind = code == CUBLAS_STATUS_ALLOC_FAILED ? ErrorKind::resource : ErrorKind::internal;
  return Error{kind, {}, "cublas", what + ": " + cublasGetStatusString(code)};
}

inline Error failure(cusolverStatus_t code, const std::string& what) {
  const ErrorKind kind = code == CUSOLVER_STATUS_ALLOC_FAILED ? ErrorKind::resource : ErrorKind::internal;
  return Error{kind, {}, "cusolver", what + ": cuSOLVER status " + std::to_string(static_cast<int>(code))};
}

inline bool succeeded(cudaError_t code) { return code == cudaSuccess; }
inline bool succeeded(cublasStatus_t code) { return code == CUBLAS_STATUS_SUCCESS; }
inline bool succeeded(cusolverStatus_t code) { return code == CUSOLVER_STATUS_SUCCESS; }

// OK, or the failure of `code`: for calls whose outcome is combined with others.
template <class Code>
Status status(Code code, const std::string& what) {
  if (succeeded(code)) return {};
  return failure(code, what);
}

// A visible device `device`, or a resource error naming the option that asked for it.
inline Status require_device(int device) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return Error{ErrorKind::resource, {}, "--backend", "no CUDA device is visible"};
  }
  if (device < 0 || device >= count)
    return Error{ErrorKind::resource, {}, "--device", "GPU " + std::to_string(device) + " does not exist"};
  return {};
}

}  // namespace hb::cuda

// Returns the Error of a failed CUDA, cuBLAS or cuSOLVER call from the enclosing
// function (which returns Status or Result<T>); `what` names the step.
#define HB_CUDA_TRY(expr, what)                                            \
  do {                                                                     \
    if (const auto hb_cuda_code_ = (expr); !::hb::cuda::succeeded(hb_cuda_code_)) \
      return ::hb::cuda::failure(hb_cuda_code_, what);                     \
  } while (0)
