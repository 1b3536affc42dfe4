// The pinned pool (src/base/pinned_pool.cpp): its blocks are host memory the driver has
// locked, copies through them round-trip, and a freed block serves the next request it
// fits instead of pinning again.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "src/backend/backend.hpp"
#include "src/base/pinned_pool.hpp"

namespace hb {
namespace {

constexpr std::size_t kBytes = (std::size_t{3} << 20) + 123;  // not a whole number of pages

TEST(PinnedPool, BlocksArePinnedAndCopiesRoundTrip) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto* block = static_cast<std::uint8_t*>(cuda::pinned_allocate(kBytes));
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(cuda::pinned_owns(block));
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, block), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  for (std::size_t i = 0; i < kBytes; ++i) block[i] = static_cast<std::uint8_t>(i * 7 + 1);
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, kBytes), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(device, block, kBytes, cudaMemcpyHostToDevice, stream), cudaSuccess);
  std::vector<std::uint8_t> expected(block, block + kBytes);
  ASSERT_EQ(cudaMemsetAsync(device, 0xff, 1, stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(block, device, kBytes, cudaMemcpyDeviceToHost, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  expected[0] = 0xff;
  EXPECT_EQ(std::memcmp(block, expected.data(), kBytes), 0);
  cudaStreamDestroy(stream);
  cudaFree(device);
  cuda::pinned_free(block);
  EXPECT_FALSE(cuda::pinned_owns(block));
}

TEST(PinnedPool, AFreedBlockServesTheNextRequestItFits) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  void* first = cuda::pinned_allocate(kBytes);
  ASSERT_NE(first, nullptr);
  const auto before = cuda::pinned_totals();
  cuda::pinned_free(first);
  void* again = cuda::pinned_allocate(kBytes - 1000);
  EXPECT_EQ(again, first);
  EXPECT_EQ(cuda::pinned_totals().blocks, before.blocks);
  cuda::pinned_free(again);
}

}  // namespace
}  // namespace hb
