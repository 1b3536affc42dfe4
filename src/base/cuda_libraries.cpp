#include "src/base/cuda_libraries.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <dlfcn.h>

namespace hb::cuda {
namespace {

// Each library opened once (a function's static), by its soname, found as the loader
// would have: the binary's run path, LD_LIBRARY_PATH, the system's cache; null where it
// cannot be opened.
void* cublas_library() {
  static void* const handle = dlopen(HB_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
  return handle;
}

void* cusolver_library() {
  static void* const handle = dlopen(HB_CUSOLVER_SONAME, RTLD_NOW | RTLD_LOCAL);
  return handle;
}

// The library's own `Pointer` called `name`, looked up once by the caller's static; null
// where the library or the symbol is missing.
template <class Pointer>
Pointer entry(void* (*library)(), const char* name) {
  void* lib = library();
  return lib != nullptr ? reinterpret_cast<Pointer>(dlsym(lib, name)) : nullptr;
}

}  // namespace

bool open_math_libraries() { return cublas_library() != nullptr && cusolver_library() != nullptr; }

void prime_gemms(int device) {
  constexpr int n = 64;
  cudaStream_t stream = nullptr;
  cublasHandle_t handle = nullptr;
  float* matrices = nullptr;  // A, B and C of n x n
  if (cublas_library() == nullptr || cudaSetDevice(device) != cudaSuccess ||
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess ||
      cudaMalloc(&matrices, 3 * n * n * sizeof(float)) != cudaSuccess || cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    cudaGetLastError();
    return;
  }
  const float one = 1.0f, zero = 0.0f;
  float* a = matrices;
  float* b = a + n * n;
  float* c = b + n * n;
  cudaMemsetAsync(matrices, 0, 3 * n * n * sizeof(float), stream);
  cublasSetStream(handle, stream);
  // The shapes and types the KNN search runs (src/knn/cuda_search.cu, inner_products).
  cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
  cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_32F, n, b, CUDA_R_32F, n, &zero, c,
               CUDA_R_32F, n, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
  cudaStreamSynchronize(stream);
  // The handle, stream and matrices stay until the process ends: freeing device memory
  // (the matrices, the handle's workspace) would wait for every stream of the device,
  // the command's own included.
  cudaGetLastError();
}

}  // namespace hb::cuda

// The entry points hyperbatch calls, with the headers' own declarations: each forwards
// to the library's, or says the library was not initialised.
#define HB_FORWARD(type, library, name, args, unopened)                                        \
  static const auto to = hb::cuda::entry<type>(hb::cuda::library, #name);                      \
  return to != nullptr ? to args : unopened
#define HB_CUBLAS_FORWARD(name, args) \
  HB_FORWARD(decltype(&name), cublas_library, name, args, CUBLAS_STATUS_NOT_INITIALIZED)
#define HB_CUSOLVER_FORWARD(name, args) \
  HB_FORWARD(decltype(&name), cusolver_library, name, args, CUSOLVER_STATUS_NOT_INITIALIZED)

extern "C" {

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t* handle) { HB_CUBLAS_FORWARD(cublasCreate_v2, (handle)); }

cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle) { HB_CUBLAS_FORWARD(cublasDestroy_v2, (handle)); }

cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  HB_CUBLAS_FORWARD(cublasSetStream_v2, (handle, stream));
}

cublasStatus_t CUBLASWINAPI cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream) {
  HB_CUBLAS_FORWARD(cublasGetStream_v2, (handle, stream));
}

cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  HB_CUBLAS_FORWARD(cublasSetMathMode, (handle, mode));
}

cublasStatus_t CUBLASWINAPI cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  HB_CUBLAS_FORWARD(cublasGetMathMode, (handle, mode));
}

cublasStatus_t CUBLASWINAPI cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode) {
  HB_CUBLAS_FORWARD(cublasSetPointerMode_v2, (handle, mode));
}

cublasStatus_t CUBLASWINAPI cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t* mode) {
  HB_CUBLAS_FORWARD(cublasGetPointerMode_v2, (handle, mode));
}

const char* CUBLASWINAPI cublasGetStatusString(cublasStatus_t status) {
  HB_FORWARD(decltype(&cublasGetStatusString), cublas_library, cublasGetStatusString, (status),
             "cuBLAS could not be opened");
}

cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                           int m, int n, int k, const float* alpha, const float* A, int lda,
                                           const float* B, int ldb, const float* beta, float* C, int ldc) {
  HB_CUBLAS_FORWARD(cublasSgemm_v2, (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
}

cublasStatus_t CUBLASWINAPI cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                              cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                              const float* alpha, const float* A, int64_t lda, const float* B,
                                              int64_t ldb, const float* beta, float* C, int64_t ldc) {
  HB_CUBLAS_FORWARD(cublasSgemm_v2_64, (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
}

cublasStatus_t CUBLASWINAPI cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                           int m, int n, int k, const double* alpha, const double* A, int lda,
                                           const double* B, int ldb, const double* beta, double* C, int ldc) {
  HB_CUBLAS_FORWARD(cublasDgemm_v2, (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
}

cublasStatus_t CUBLASWINAPI cublasDsyrk_v2_64(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans,
                                              int64_t n, int64_t k, const double* alpha, const double* A,
                                              int64_t lda, const double* beta, double* C, int64_t ldc) {
  HB_CUBLAS_FORWARD(cublasDsyrk_v2_64, (handle, uplo, trans, n, k, alpha, A, lda, beta, C, ldc));
}

cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                         int lda, const void* B, cudaDataType Btype, int ldb, const void* beta,
                                         void* C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                         cublasGemmAlgo_t algo) {
  // The header adds C++ overloads of cublasGemmEx: this one is the library's.
  using GemmEx = cublasStatus_t(CUBLASWINAPI*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                               const void*, const void*, cudaDataType, int, const void*,
                                               cudaDataType, int, const void*, void*, cudaDataType, int,
                                               cublasComputeType_t, cublasGemmAlgo_t);
  HB_FORWARD(GemmEx, cublas_library, cublasGemmEx,
             (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType,
              algo),
             CUBLAS_STATUS_NOT_INITIALIZED);
}

cusolverStatus_t CUSOLVERAPI cusolverDnCreate(cusolverDnHandle_t* handle) {
  HB_CUSOLVER_FORWARD(cusolverDnCreate, (handle));
}

cusolverStatus_t CUSOLVERAPI cusolverDnDestroy(cusolverDnHandle_t handle) {
  HB_CUSOLVER_FORWARD(cusolverDnDestroy, (handle));
}

cusolverStatus_t CUSOLVERAPI cusolverDnDsyevd_bufferSize(cusolverDnHandle_t handle, cusolverEigMode_t jobz,
                                                         cublasFillMode_t uplo, int n, const double* A, int lda,
                                                         const double* W, int* lwork) {
  HB_CUSOLVER_FORWARD(cusolverDnDsyevd_bufferSize, (handle, jobz, uplo, n, A, lda, W, lwork));
}

cusolverStatus_t CUSOLVERAPI cusolverDnDsyevd(cusolverDnHandle_t handle, cusolverEigMode_t jobz,
                                              cublasFillMode_t uplo, int n, double* A, int lda, double* W,
                                              double* work, int lwork, int* info) {
  HB_CUSOLVER_FORWARD(cusolverDnDsyevd, (handle, jobz, uplo, n, A, lda, W, work, lwork, info));
}

}  // extern "C"
