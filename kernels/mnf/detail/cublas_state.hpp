// Internal to kernels/mnf: sets a cuBLAS handle's stream, pointer mode and math mode
// for one call and puts the caller's settings back afterwards, so launchers can share
// the backend's handle without surprising it.
#pragma once

#include <cublas_v2.h>

namespace hb::kernels::mnf::detail {

class CublasCallState {
 public:
  CublasCallState(cublasHandle_t handle, cudaStream_t stream, cublasMath_t math) : handle_(handle) {
    status_ = cublasGetStream(handle, &stream_);
    if (status_ == CUBLAS_STATUS_SUCCESS) status_ = cublasGetPointerMode(handle, &pointer_mode_);
    if (status_ == CUBLAS_STATUS_SUCCESS) status_ = cublasGetMathMode(handle, &math_);
    if (status_ == CUBLAS_STATUS_SUCCESS) status_ = cublasSetStream(handle, stream);
    if (status_ == CUBLAS_STATUS_SUCCESS) status_ = cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST);
    if (status_ == CUBLAS_STATUS_SUCCESS) status_ = cublasSetMathMode(handle, math);
  }
  ~CublasCallState() {
    cublasSetStream(handle_, stream_);
    cublasSetPointerMode(handle_, pointer_mode_);
    cublasSetMathMode(handle_, math_);
  }
  CublasCallState(const CublasCallState&) = delete;
  CublasCallState& operator=(const CublasCallState&) = delete;

  cublasStatus_t status() const { return status_; }

 private:
  cublasHandle_t handle_;
  cublasStatus_t status_ = CUBLAS_STATUS_SUCCESS;
  cudaStream_t stream_ = nullptr;
  cublasPointerMode_t pointer_mode_ = CUBLAS_POINTER_MODE_HOST;
  cublasMath_t math_ = CUBLAS_DEFAULT_MATH;
};

}  // namespace hb::kernels::mnf::detail
