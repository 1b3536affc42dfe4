#include "kernels/mnf/types.cuh"

namespace hb::kernels::mnf {

std::string LaunchStatus::message() const {
  if (bad_argument) return std::string("bad argument: ") + bad_argument;
  if (cuda != cudaSuccess) return std::string("CUDA: ") + cudaGetErrorString(cuda);
  if (cublas != CUBLAS_STATUS_SUCCESS) return std::string("cuBLAS: ") + cublasGetStatusString(cublas);
  return "ok";
}

}  // namespace hb::kernels::mnf
