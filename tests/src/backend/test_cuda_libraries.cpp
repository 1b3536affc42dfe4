// cuBLAS and cuSOLVER opened on first use (src/base/cuda_libraries.cpp): a process that
// never calls them never loads them, and the entry points hyperbatch calls reach the
// libraries' own.
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "src/backend/backend.hpp"
#include "src/base/cuda_libraries.hpp"
#include "tests/support/cli_path.hpp"

namespace hb {
namespace {

// What the dynamic loader says it initialised while `command` ran (LD_DEBUG=libs).
std::string loader_log(const std::string& command) {
  const std::string line = "LD_DEBUG=libs " + command + " 2>&1 >/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(line.c_str(), "r"), pclose);
  std::string out;
  std::array<char, 4096> buffer{};
  while (pipe && fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) out += buffer.data();
  return out;
}

TEST(CudaLibraries, AProcessThatNeverCallsThemNeverLoadsThem) {
  const std::string cli = test::cli_path();
  if (cli.empty()) GTEST_SKIP() << "no hyperbatch binary at " << HB_CLI << " or beside the test";
  const std::string log = loader_log(cli + " --version");
  ASSERT_NE(log.find("calling init"), std::string::npos) << "LD_DEBUG said nothing";
  EXPECT_EQ(log.find("libcublas"), std::string::npos);
  EXPECT_EQ(log.find("libcusolver"), std::string::npos);
}

TEST(CudaLibraries, EntryPointsReachTheLibraries) {
  ASSERT_TRUE(cuda::open_math_libraries());
  // cuBLAS's own words for two statuses (it needs no GPU for them), not the shim's.
  const std::string success = cublasGetStatusString(CUBLAS_STATUS_SUCCESS);
  const std::string invalid = cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_NE(success, "cuBLAS could not be opened");
  EXPECT_FALSE(success.empty());
  EXPECT_NE(success, invalid);
}

TEST(CudaLibraries, HandlesOnAGpu) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  cublasHandle_t blas = nullptr;
  ASSERT_EQ(cublasCreate(&blas), CUBLAS_STATUS_SUCCESS);
  cublasMath_t mode{};
  EXPECT_EQ(cublasGetMathMode(blas, &mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasDestroy(blas), CUBLAS_STATUS_SUCCESS);
  cusolverDnHandle_t solver = nullptr;
  ASSERT_EQ(cusolverDnCreate(&solver), CUSOLVER_STATUS_SUCCESS);
  EXPECT_EQ(cusolverDnDestroy(solver), CUSOLVER_STATUS_SUCCESS);
}

TEST(CudaLibraries, PrimingLeavesCublasExact) {
  cuda::prime_gemms(0);  // without a GPU it does nothing
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);  // no error left behind
  // C = Aᵀ B of small integers (exact in FP32) on the primed library.
  constexpr int n = 3;
  const float a[n * n] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const float b[n * n] = {9, 8, 7, 6, 5, 4, 3, 2, 1};
  float* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 3 * sizeof(a)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, a, sizeof(a), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device + n * n, b, sizeof(b), cudaMemcpyHostToDevice), cudaSuccess);
  cublasHandle_t blas = nullptr;
  ASSERT_EQ(cublasCreate(&blas), CUBLAS_STATUS_SUCCESS);
  const float one = 1.0f, zero = 0.0f;
  ASSERT_EQ(cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, device, n, device + n * n, n, &zero,
                        device + 2 * n * n, n),
            CUBLAS_STATUS_SUCCESS);
  float c[n * n] = {};
  ASSERT_EQ(cudaMemcpy(c, device + 2 * n * n, sizeof(c), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      float want = 0;
      for (int l = 0; l < n; ++l) want += a[i * n + l] * b[j * n + l];
      EXPECT_EQ(c[j * n + i], want) << i << "," << j;
    }
  cublasDestroy(blas);
  cudaFree(device);
}

}  // namespace
}  // namespace hb
