// An ImageSink into host memory, for tests on hosts without a GPU: the loads, the
// borrowed tiles and the hashes of io/file_image.hpp without a device.
#pragma once

#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "io/file_image.hpp"

namespace hb::io::test {

class HostImageSink final : public ImageSink {
 public:
  int device() const override { return -1; }
  Result<std::shared_ptr<std::byte[]>> allocate(std::size_t bytes) override {
    return std::make_shared_for_overwrite<std::byte[]>(bytes);
  }
  Result<std::byte*> store_buffer(int thread) override {
    auto& part = parts_.at(static_cast<std::size_t>(thread));
    part.resize(kImageStoreBytes);
    return part.data();
  }
  Status store(int, std::byte* image, std::int64_t at, std::span<const std::byte> part) override {
    std::memcpy(image + at, part.data(), part.size());
    return {};
  }
  Status finish() override { return {}; }

 private:
  std::array<std::vector<std::byte>, kImageReaders> parts_;
};

inline std::shared_ptr<ImageSink> host_image_sink() { return std::make_shared<HostImageSink>(); }

}  // namespace hb::io::test
