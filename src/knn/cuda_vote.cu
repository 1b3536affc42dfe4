// CudaBatchVoter: lists of a query block to the GPU, kernels/knn/vote.cu, labels and
// confidences back. Training labels are uploaded once.
#include <algorithm>
#include <vector>

#include "kernels/knn/knn.cuh"
#include "src/base/cuda_buffers.hpp"
#include "src/knn/cuda_search.hpp"
#include "src/base/cuda_error.hpp"

namespace hb::knn {
namespace {

namespace kk = hb::kernels::knn;

constexpr std::int64_t kBlockBytes = std::int64_t{256} << 20;

class CudaBatchVoter final : public BatchVoter {
 public:
  CudaBatchVoter(const VoteRule& rule, int device) : rule_(rule), device_(device) {}
  ~CudaBatchVoter() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  CudaBatchVoter(const CudaBatchVoter&) = delete;
  CudaBatchVoter& operator=(const CudaBatchVoter&) = delete;

  Status init() {
    HB_CUDA_TRY(cudaSetDevice(device_), "cudaSetDevice");
    HB_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    HB_CUDA_TRY(labels_.reserve(std::max<std::size_t>(rule_.labels.size_bytes(), 2)), "cudaMalloc (labels)");
    HB_CUDA_TRY(cudaMemcpy(labels_.as<std::uint16_t>(), rule_.labels.data(), rule_.labels.size_bytes(),
                           cudaMemcpyHostToDevice),
                "copy labels");
    return {};
  }

  std::string_view backend_name() const override { return "cuda"; }

  Status vote(const TopK& lists, std::int64_t nq, std::span<VoteResult> out) override {
    if (nq > lists.queries() || static_cast<std::int64_t>(out.size()) < nq)
      return Error{ErrorKind::internal, {}, "knn", "vote outputs do not match the lists"};
    if (nq == 0) return {};
    HB_CUDA_TRY(cudaSetDevice(device_), "cudaSetDevice");
    const int k = lists.k();
    const std::int64_t block = std::clamp<std::int64_t>(kBlockBytes / (12 * std::int64_t{k} + 6), 1, 1 << 24);
    const auto block_slots = static_cast<std::size_t>(std::min(block, nq)) * static_cast<std::size_t>(k);
    HB_CUDA_TRY(distance_.reserve(block_slots * 4), "cudaMalloc (vote)");
    HB_CUDA_TRY(index_.reserve(block_slots * 8), "cudaMalloc (vote)");
    HB_CUDA_TRY(label_.reserve(static_cast<std::size_t>(std::min(block, nq)) * 2), "cudaMalloc (vote)");
    HB_CUDA_TRY(confidence_.reserve(static_cast<std::size_t>(std::min(block, nq)) * 4), "cudaMalloc (vote)");
    for (std::int64_t q0 = 0; q0 < nq; q0 += block) {
      const int rows = static_cast<int>(std::min(block, nq - q0));
      const auto slots = static_cast<std::size_t>(rows) * static_cast<std::size_t>(k);
      HB_CUDA_TRY(cudaMemcpyAsync(distance_.as<float>(), lists.distances(q0), slots * 4, cudaMemcpyHostToDevice, stream_),
                  "copy lists");
      HB_CUDA_TRY(cudaMemcpyAsync(index_.as<std::int64_t>(), lists.indices(q0), slots * 8, cudaMemcpyHostToDevice,
                                  stream_),
                  "copy lists");
      const kk::VoteInputs in{distance_.as<float>(),
                              index_.as<std::int64_t>(),
                              k,
                              labels_.as<std::uint16_t>(),
                              static_cast<std::int64_t>(rule_.labels.size()),
                              rule_.classes,
                              rule_.metric == Metric::cosine ? kk::Metric::cosine : kk::Metric::euclidean,
                              rule_.weights == Weights::distance ? kk::Weights::distance : kk::Weights::uniform};
      HB_CUDA_TRY(kk::vote(in, rows, label_.as<std::uint16_t>(), confidence_.as<float>(), stream_), "vote kernel");
      host_label_.resize(static_cast<std::size_t>(rows));
      host_confidence_.resize(static_cast<std::size_t>(rows));
      HB_CUDA_TRY(cudaMemcpyAsync(host_label_.data(), label_.as<std::uint16_t>(), host_label_.size() * 2,
                                  cudaMemcpyDeviceToHost, stream_),
                  "copy votes back");
      HB_CUDA_TRY(cudaMemcpyAsync(host_confidence_.data(), confidence_.as<float>(), host_confidence_.size() * 4,
                                  cudaMemcpyDeviceToHost, stream_),
                  "copy votes back");
      HB_CUDA_TRY(cudaStreamSynchronize(stream_), "vote");
      for (int r = 0; r < rows; ++r)
        out[static_cast<std::size_t>(q0 + r)] = {host_label_[static_cast<std::size_t>(r)],
                                                 host_confidence_[static_cast<std::size_t>(r)]};
    }
    return {};
  }

 private:
  VoteRule rule_;
  int device_;
  cudaStream_t stream_ = nullptr;
  cuda::DeviceBuffer labels_, distance_, index_, label_, confidence_;
  std::vector<std::uint16_t> host_label_;
  std::vector<float> host_confidence_;
};

}  // namespace

int cuda_vote_max_classes() { return kk::vote_max_classes(); }

Result<std::unique_ptr<BatchVoter>> make_cuda_batch_voter(const VoteRule& rule, int device) {
  device = resolve_gpu(device);
  HB_TRY(::hb::cuda::require_device(device));
  if (rule.classes < 1 || rule.classes > kk::vote_max_classes())
    return Error{ErrorKind::usage, {}, "classes", "too many classes for the GPU vote"};
  auto voter = std::make_unique<CudaBatchVoter>(rule, device);
  HB_TRY(voter->init());
  return std::unique_ptr<BatchVoter>(std::move(voter));
}

}  // namespace hb::knn
