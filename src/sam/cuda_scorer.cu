// SAM / SCM on one GPU behind the SamScorer seam: the raw tile crosses as stored (int16
// stays 2 bytes; tiles are read into pinned memory) and is widened on the device. The
// direct kernel or DGEMM + selection (kernels/sam) score it; results come back per tile.
#include <cublas_v2.h>

#include <algorithm>
#include <string>

#include "kernels/sam/sam.cuh"
#include "src/base/cuda_buffers.hpp"
#include "src/base/cuda_error.hpp"
#include "src/sam/cuda_scorer.hpp"


namespace hb::sam {
namespace {

namespace k = kernels::sam;

constexpr std::size_t kGemmBudgetBytes = std::size_t{512} << 20;  // x and dots of one chunk


class CudaScorer final : public SamScorer {
 public:
  CudaScorer(Formulation formulation, int device, std::unique_ptr<Backend> backend)
      : requested_(formulation), device_(device), backend_(std::move(backend)) {}
  ~CudaScorer() override {
    if (cublas_) cublasDestroy(cublas_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  CudaScorer(const CudaScorer&) = delete;
  CudaScorer& operator=(const CudaScorer&) = delete;

  Status init() {
    HB_CUDA_TRY(cudaSetDevice(device_), "cudaSetDevice");
    HB_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    if (auto s = cublasCreate(&cublas_); s != CUBLAS_STATUS_SUCCESS) return ::hb::cuda::failure(s, "cublasCreate");
    if (auto s = cublasSetStream(cublas_, stream_); s != CUBLAS_STATUS_SUCCESS) return ::hb::cuda::failure(s, "cublasSetStream");
    return {};
  }

  std::string_view backend_name() const override { return "cuda"; }
  std::string formulation() const override {
    if (!direct_) return "dgemm";
    return constant_ ? "direct, constant memory" : "direct, global memory";
  }
  HostAllocator host_allocator() const override { return backend_->host_allocator(); }

  Status set_references(const References& refs) override {
    cudaSetDevice(device_);
    refs_ = refs;
    direct_ = requested_ == Formulation::direct ||
              (requested_ == Formulation::automatic && refs.count <= direct_formulation_limit(refs.dims));
    // The direct kernel scores references in blocks: pad with zero spectra.
    const std::int64_t padded = direct_ ? (refs.count + k::kReferenceBlock - 1) / k::kReferenceBlock * k::kReferenceBlock
                                        : refs.count;
    std::vector<double> host(refs.unit);
    host.resize(static_cast<std::size_t>(padded * refs.dims), 0.0);
    count_padded_ = padded;
    constant_ = direct_ && static_cast<std::int64_t>(host.size()) <= k::kConstantDoubles;
    if (constant_) {
      HB_CUDA_TRY(k::upload_constant_references(host.data(), static_cast<std::int64_t>(host.size()), stream_),
                  "references to constant memory");
    } else {
      HB_CUDA_TRY(references_.reserve(host.size() * sizeof(double)), "cudaMalloc references");
      HB_CUDA_TRY(cudaMemcpyAsync(references_.as<double>(), host.data(), host.size() * sizeof(double),
                                  cudaMemcpyHostToDevice, stream_),
                  "references to the device");
    }
    HB_CUDA_TRY(cudaStreamSynchronize(stream_), "references to the device");
    return {};
  }

  Status score(const io::Tile& tile, const PixelBands& bands, bool all_scores, TileScores& out) override {
    cudaSetDevice(device_);
    HB_TRY(upload_bands(bands));
    const std::int64_t pixels = tile.core().rows() * tile.samples();
    const std::size_t sample_bytes = bytes_per_sample(tile.type());
    const auto raw_bytes = static_cast<std::size_t>(pixels * tile.bands()) * sample_bytes;
    const std::byte* core = tile.bytes().data() + static_cast<std::size_t>(tile.offset(tile.core().begin, 0)) * sample_bytes;
    HB_CUDA_TRY(raw_.reserve(std::max<std::size_t>(raw_bytes, 1)), "cudaMalloc tile");
    HB_CUDA_TRY(cudaMemcpyAsync(raw_.as<void>(), core, raw_bytes, cudaMemcpyHostToDevice, stream_), "tile to the device");
    const auto count = static_cast<std::size_t>(refs_.count);
    HB_CUDA_TRY(best_.reserve(std::max<std::size_t>(pixels, 1) * sizeof(std::int32_t)), "cudaMalloc outputs");
    HB_CUDA_TRY(best_score_.reserve(std::max<std::size_t>(pixels, 1) * sizeof(float)), "cudaMalloc outputs");
    if (all_scores) HB_CUDA_TRY(scores_.reserve(std::max<std::size_t>(pixels, 1) * count * sizeof(float)), "cudaMalloc scores");
    const k::RawPixels in{tile.type(), raw_.as<void>(), pixels, static_cast<int>(tile.bands())};
    const k::PixelRule rule{band_index_.as<int>(), static_cast<int>(refs_.dims), bands.ignore_value.has_value(),
                            static_cast<float>(bands.ignore_value.value_or(0.0)), refs_.method == Method::scm};
    const k::ScoreOutputs outputs{best_.as<std::int32_t>(), best_score_.as<float>(),
                                  all_scores ? scores_.as<float>() : nullptr, static_cast<int>(refs_.count),
                                  refs_.method == Method::sam};
    if (direct_) {
      HB_CUDA_TRY(k::score_direct(in, rule, constant_ ? nullptr : references_.as<double>(),
                                  static_cast<int>(count_padded_), outputs, stream_),
                  "direct SAM kernel");
    } else {
      HB_TRY(score_gemm(in, rule, outputs));
    }
    out.best.resize(static_cast<std::size_t>(pixels));
    out.best_score.resize(static_cast<std::size_t>(pixels));
    out.scores.resize(all_scores ? static_cast<std::size_t>(pixels) * count : 0);
    HB_CUDA_TRY(cudaMemcpyAsync(out.best.data(), best_.as<void>(), out.best.size() * sizeof(std::int32_t),
                                cudaMemcpyDeviceToHost, stream_), "results to the host");
    HB_CUDA_TRY(cudaMemcpyAsync(out.best_score.data(), best_score_.as<void>(), out.best_score.size() * sizeof(float),
                                cudaMemcpyDeviceToHost, stream_), "results to the host");
    if (all_scores)
      HB_CUDA_TRY(cudaMemcpyAsync(out.scores.data(), scores_.as<void>(), out.scores.size() * sizeof(float),
                                  cudaMemcpyDeviceToHost, stream_), "scores to the host");
    HB_CUDA_TRY(cudaStreamSynchronize(stream_), "SAM scoring");
    return {};
  }

 private:
  Status upload_bands(const PixelBands& bands) {
    std::vector<int> index(bands.bands.begin(), bands.bands.end());
    if (index == bands_) return {};
    bands_ = std::move(index);
    HB_CUDA_TRY(band_index_.reserve(bands_.size() * sizeof(int)), "cudaMalloc bands");
    HB_CUDA_TRY(cudaMemcpyAsync(band_index_.as<int>(), bands_.data(), bands_.size() * sizeof(int),
                                cudaMemcpyHostToDevice, stream_), "bands to the device");
    HB_CUDA_TRY(cudaStreamSynchronize(stream_), "bands to the device");
    return {};
  }

  // x = widened pixels, dots = x . U^T (DGEMM), then the selection kernel; in chunks of pixels.
  Status score_gemm(const k::RawPixels& in, const k::PixelRule& rule, const k::ScoreOutputs& outputs) {
    const std::int64_t per_pixel = 8 * (refs_.dims + refs_.count + 1);
    const std::int64_t chunk = std::clamp<std::int64_t>(static_cast<std::int64_t>(kGemmBudgetBytes) / per_pixel, 1,
                                                        std::max<std::int64_t>(in.pixels, 1));
    HB_CUDA_TRY(x_.reserve(static_cast<std::size_t>(chunk * refs_.dims) * 8), "cudaMalloc pixels");
    HB_CUDA_TRY(dots_.reserve(static_cast<std::size_t>(chunk * refs_.count) * 8), "cudaMalloc dots");
    HB_CUDA_TRY(norm_.reserve(static_cast<std::size_t>(chunk) * 8), "cudaMalloc norms");
    const std::size_t sample_bytes = bytes_per_sample(in.type);
    for (std::int64_t p0 = 0; p0 < in.pixels; p0 += chunk) {
      const std::int64_t n = std::min(chunk, in.pixels - p0);
      k::RawPixels part = in;
      part.data = static_cast<const std::byte*>(in.data) + static_cast<std::size_t>(p0 * in.bands) * sample_bytes;
      part.pixels = n;
      HB_CUDA_TRY(k::gather_pixels(part, rule, x_.as<double>(), norm_.as<double>(), stream_), "SAM gather kernel");
      const double one = 1.0, zero = 0.0;
      const int dims = static_cast<int>(refs_.dims), count = static_cast<int>(refs_.count);
      if (auto s = cublasDgemm(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, count, static_cast<int>(n), dims, &one,
                               references_.as<double>(), dims, x_.as<double>(), dims, &zero, dots_.as<double>(), count);
          s != CUBLAS_STATUS_SUCCESS)
        return ::hb::cuda::failure(s, "cublasDgemm");
      k::ScoreOutputs part_out = outputs;
      part_out.best += p0;
      part_out.best_score += p0;
      if (part_out.scores) part_out.scores += p0 * refs_.count;
      HB_CUDA_TRY(k::select_best(dots_.as<double>(), norm_.as<double>(), n, part_out, stream_), "SAM select kernel");
    }
    return {};
  }

  Formulation requested_;
  int device_;
  std::unique_ptr<Backend> backend_;  // for its pinned host allocator
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  References refs_;
  bool direct_ = true;
  bool constant_ = false;
  std::int64_t count_padded_ = 0;
  std::vector<int> bands_;
  cuda::DeviceBuffer references_, band_index_, raw_, best_, best_score_, scores_, x_, dots_, norm_;
};

}  // namespace

Result<std::unique_ptr<SamScorer>> make_cuda_sam_scorer(Formulation formulation, int device) {
  device = resolve_gpu(device);
  auto backend = make_backend(BackendKind::cuda, device);
  if (!backend) return backend.error();
  auto scorer = std::make_unique<CudaScorer>(formulation, device, std::move(*backend));
  HB_TRY(scorer->init());
  return std::unique_ptr<SamScorer>(std::move(scorer));
}

}  // namespace hb::sam
