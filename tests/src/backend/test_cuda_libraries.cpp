// cuBLAS and cuSOLVER opened on first use (src/base/cuda_libraries.cpp): a process that
// never calls them never loads them, and the entry points hyperbatch calls reach the
// libraries' own.
#include <cublas_v2.h>
#include <cusolverDn.h>
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

}  // namespace
}  // namespace hb
