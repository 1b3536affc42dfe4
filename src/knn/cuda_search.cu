// CudaKnnSearch: per query block, the queries and their running lists go to the GPU,
// each selection method runs there, and the lists come back (in a search_sequence over
// the ring's shards, after the last shard only). Training chunks are
// uploaded once and cached by first_index within a budget taken from the free device
// memory; a chunk past the budget is streamed through one reused slot per call.
//  kmin, bitonic: one SGEMM over the whole chunk, distances finished in place, chunk
//    top-k per row, merged into the running lists (GS_KNN's layout).
//  fast: SGEMM slabs of slab_rows x slab_cols (512 MiB or 2 GiB), consumed by
//    the fused finish + filter + select kernel (a warp per row for k <= 32, a block
//    per row above): the finished distances are never written (kernels/knn/README.md).
//  tensor (euclidean): the same slabs from a TF32 tensor-core GEMM (from k = 32, each
//    row first bounded over the whole chunk); the pairs its proven bound cannot rule
//    out are finished exactly (kernels/knn/tensor.cu): fast's
//    lists where cuBLAS's SGEMM sums each inner product as one FMA chain in band order,
//    which its kernels do for some shapes and not others. Cosine, or more than
//    tensor_max_dims() bands, runs fast.
// `auto` runs what gpu_automatic_method gives for the shape (tensor from 128 features up
// to k = 1024, fast elsewhere). A pick by timing (GS_KNN's rule) chose tensor on some
// runs and hosts and fast on others, and on features that are not integers the two can
// order a pair differently in the last bit: the same command then wrote different lists.
// The SGEMMs run on their own stream into two tiles, so that the next slab's inner
// products overlap the selection of the current one; events order the two streams.
// fast sends each slab's finished lists home on a third stream (pinned host lists), so
// that only the last slab's copy is left after the search: at k = 1024 the lists are
// 12 KB a query, and their copy after the search was a quarter of its time.
// Narrow scenes' query tiles are gathered on the device by DeviceQueryGather
// (cuda_query_gather.cu) and searched where they are.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernels/knn/knn.cuh"
#include "src/base/cuda_buffers.hpp"
#include "src/base/stopwatch.hpp"
#include "src/classify/features.hpp"
#include "src/knn/cuda_query_gather.hpp"
#include "src/knn/cuda_search.hpp"
#include "src/base/cuda_error.hpp"

namespace hb::knn {
namespace {

namespace kk = hb::kernels::knn;

// fast: inner-product slabs (at most a quarter of the work budget). Warp path: 16384 x
// 8192, 512 MiB, whose SGEMM runs within 6 % of its rate on a whole chunk (H200,
// d = 224; L2-sized 32 MiB slabs of 1320 rows run 30 % below it).
// Block path: eight waves of its kernel (4224 rows on an H200) by up to 2 GiB, a whole
// 10^5-row chunk: against two waves by 512 MiB, k = 200 to 4096 ran 10-21 % faster at
// d = 224 (fewer, larger SGEMMs; a shorter tail of straggling rows per launch).
constexpr std::int64_t kWarpSlabBytes = std::int64_t{512} << 20;
constexpr std::int64_t kBlockSlabBytes = std::int64_t{2} << 30;
constexpr int kWarpPathRows = 16384;
constexpr int kBlockPathWaves = 8;
// tensor: slabs of 4096 rows by the whole chunk up to 2 GiB. From k = 10 on, a chunk
// whose training rows fill more than a third of the L2 (16384 at d = 224 on an H100) is
// bounded over whole (below). Without that bound from k = 32, where a slab of its
// products exceeds the slab budget, it is walked in blocks of columns of that size,
// blocks outer, so that the exact products' gathers of k and more training rows a query
// stay in the L2 while every row slab is searched against a block (bench_knn, one H100,
// d = 224, N = 10^5: k = 100 0.71 -> 1.14 M queries/s against the whole chunk by each
// row's own bound); at k = 1 and 10 the whole chunk's one GEMM and filter pass run
// faster (1.93 against 1.68 M, 1.59 against 1.51 M).
constexpr int kTensorRows = 4096;
constexpr int kTensorL2Share = 3;
constexpr int kTensorBlocksFromK = 32;
// From k = 10 on, where the chunk's rows outgrow that third of the L2, a row's pairs are
// first bounded over the whole chunk and finished in one pass over it
// (run_tensor_bounded). From k = 32 that replaces column blocks, each of whose own bound
// keeps about k pairs a block (bench_knn --chunk-bound-from-k, d = 224, H200, one call:
// k = 32 1.94 M queries/s either way, k = 64 1.72 -> 1.87 M, k = 100 1.55 -> 1.86 M);
// below it, the filter's one pass over the whole chunk (H200, one call: k = 10 2.13 ->
// 2.46 M, k = 16 2.13 -> 2.43 M; not k = 4, 2.55 against 2.51 M, nor k = 1, 2.60
// against 2.54 M, where the filter's own sample already bounds the row closely). The
// bound is sampled from 2048 training rows (runs of 8 adjacent rows) and then refined by
// its count to near the k-th pair's upper end, so the sample's size only sets the
// count's range: 4096 samples ran within 2 % of 2048 (--chunk-samples, H200: k = 128
// 1.56 against 1.59 M, k = 1024 0.96 against 0.95-0.96 M), 8192 slower at k = 128
// (1.35 M).
constexpr int kTensorChunkBoundFromK = 10;
constexpr int kTensorChunkSamples = 2048;

struct DeviceChunk {
  cuda::DeviceBuffer features;
  cuda::DeviceBuffer norms;
  cuda::DeviceBuffer largest_norm;  // one float: the scans' screen (kernels/knn/knn.cuh)
  std::int64_t count = 0;
  std::int64_t dims = 0;
  std::int64_t bytes() const { return count * dims * 4 + count * 4; }
};

class CudaKnnSearch final : public KnnSearch {
 public:
  CudaKnnSearch(const SearchOptions& options, int device) : options_(options), chosen_(options.select), device_(device) {}
  ~CudaKnnSearch() override {
    if (times_.spans > 0) log_search_times(device_, times_);
    if (blas_) cublasDestroy(blas_);
    for (auto* e : {&tile_free_[0], &tile_free_[1], &tile_ready_[0], &tile_ready_[1]})
      if (*e) cudaEventDestroy(*e);
    for (auto* e : span_)
      if (e) cudaEventDestroy(e);
    if (rows_done_) cudaEventDestroy(rows_done_);
    if (inputs_rounded_) cudaEventDestroy(inputs_rounded_);
    if (home_done_) cudaEventDestroy(home_done_);
    if (copy_stream_) cudaStreamDestroy(copy_stream_);
    if (gemm_stream_) cudaStreamDestroy(gemm_stream_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  CudaKnnSearch(const CudaKnnSearch&) = delete;
  CudaKnnSearch& operator=(const CudaKnnSearch&) = delete;

  Status init() {
    HB_CUDA_TRY(cudaSetDevice(device_), "cudaSetDevice");
    HB_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    HB_CUDA_TRY(cudaStreamCreateWithFlags(&gemm_stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    HB_CUDA_TRY(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    for (auto* e : {&tile_free_[0], &tile_free_[1], &tile_ready_[0], &tile_ready_[1], &rows_done_, &home_done_,
                    &inputs_rounded_})
      HB_CUDA_TRY(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "cudaEventCreate");
    for (auto& e : span_) HB_CUDA_TRY(cudaEventCreate(&e), "cudaEventCreate");
    HB_TRY(gather_.init());
    HB_CUDA_TRY(cublasCreate(&blas_), "cublasCreate");
    HB_CUDA_TRY(cublasSetStream(blas_, gemm_stream_), "cublasSetStream");
    // Plain FP32: no TF32 tensor-core rounding of the inner products.
    HB_CUDA_TRY(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    std::size_t free_bytes = 0, total_bytes = 0;
    HB_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    const auto free = static_cast<std::int64_t>(free_bytes);
    block_path_rows_ = std::clamp(kBlockPathWaves * kk::fused_rows_per_wave(), 256, kWarpPathRows);
    HB_CUDA_TRY(cudaDeviceGetAttribute(&l2_bytes_, cudaDevAttrL2CacheSize, device_), "cudaDeviceGetAttribute");
    cache_budget_ = options_.device_scratch_bytes > 0 ? options_.device_scratch_bytes : free / 2;
    work_budget_ = options_.device_scratch_bytes > 0 ? options_.device_scratch_bytes
                                                     : std::min<std::int64_t>(free * 3 / 10, std::int64_t{8} << 30);
    return {};
  }

  std::string_view backend_name() const override { return "cuda"; }

  float* query_buffer(std::int64_t floats, int slot = 0) override {
    slot &= 1;
    if (staging_[slot].reserve(static_cast<std::size_t>(floats) * 4) != cudaSuccess)
      return KnnSearch::query_buffer(floats, slot);
    staging_fill_[slot] = ++fills_;
    return staging_[slot].as<float>();
  }

  std::pmr::memory_resource* list_memory() const override { return cuda::pinned_memory(); }
  // upload_lists makes unwritten lists on the device; every pair of every row comes
  // home (copy_rows_home).
  bool makes_empty_lists() const override { return true; }

  // Narrow and f32 tiles go to the GPU as read (pinned) and their queries are gathered
  // there: narrow ones cross in half the bytes of FP32 or fewer, and neither is packed
  // on the host, a pass over every byte (src/knn/README.md: the search of the MNF
  // features of `hyperbatch run` waited 0.02 s a flightline for its tiles, 0.05 s when
  // the host packed them).
  bool gathers(DataType type) const override { return classify::is_narrow(type) || type == DataType::f32; }
  HostAllocator tile_allocator() const override { return cuda::pinned_allocator(); }

  // The tile goes up and its queries are gathered on the device (DeviceQueryGather);
  // without device room the base class gathers on the host.
  Result<const float*> gather(int slot, const io::Tile& tile, std::span<const std::int64_t> pixel,
                              std::span<const std::int64_t> bands, std::span<const double> shift) override {
    slot &= 1;
    HB_CUDA_TRY(cudaSetDevice(device_), "cudaSetDevice");  // gather() may run on another thread
    staging_fill_[slot] = ++fills_;
    auto queries = gather_.gather(slot, tile, pixel, bands, shift);
    if (queries && *queries == nullptr) return KnnSearch::gather(slot, tile, pixel, bands, shift);
    return queries;
  }

  // The valid pixels listed on the device too, from the tile uploaded anyway.
  Result<const float*> list_and_gather(int slot, const io::Tile& tile, const classify::BandSelection& selection,
                                       std::optional<double> ignore_value, std::span<const double> shift,
                                       std::vector<std::int64_t>& pixel) override {
    if (!gathers(tile.type())) return KnnSearch::list_and_gather(slot, tile, selection, ignore_value, shift, pixel);
    slot &= 1;
    HB_CUDA_TRY(cudaSetDevice(device_), "cudaSetDevice");  // may run on another thread
    staging_fill_[slot] = ++fills_;
    const kernels::UnusableSample unusable{classify::narrow_ignore_target(tile.type(), ignore_value),
                                           classify::float_ignore_value(ignore_value)};
    auto queries = gather_.list_and_gather(slot, tile, selection.bands, unusable, shift, pixel);
    if (queries && *queries == nullptr) return KnnSearch::list_and_gather(slot, tile, selection, ignore_value, shift, pixel);
    return queries;
  }

  Status copy_queries(const float* queries, std::int64_t floats, float* out) override {
    if (gather_.slot_of(queries) < 0) return KnnSearch::copy_queries(queries, floats, out);
    HB_CUDA_TRY(cudaMemcpy(out, queries, static_cast<std::size_t>(floats) * 4, cudaMemcpyDeviceToHost), "copy queries home");
    return {};
  }

  bool queries_on_device(const float* queries) const override { return gather_.slot_of(queries) >= 0; }

  SelectMethod select_method() const override { return chosen_; }

  Status search_sequence(const float* queries, std::int64_t nq, int steps, const ChunkAt& chunk_at,
                         TopK& running) override {
    const Status status = search_chunks(queries, nq, steps, chunk_at, running, false);
    lists_fill_ = -1;
    return status;
  }

  bool prepare_votes(const VoteRule& rule) override {
    if (rule.classes < 1 || rule.classes > kk::vote_max_classes()) return false;
    const auto bytes = std::max<std::size_t>(rule.labels.size_bytes(), 2);
    if (cudaSetDevice(device_) != cudaSuccess || vote_labels_.reserve(bytes) != cudaSuccess ||
        cudaMemcpy(vote_labels_.as<std::uint16_t>(), rule.labels.data(), rule.labels.size_bytes(),
                   cudaMemcpyHostToDevice) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    vote_rule_ = rule;
    return true;
  }

  // The lists of the last chunk stay on the device when the whole block fits there
  // (lists_fill_), and are voted where they are.
  Result<bool> search_sequence_and_vote(const float* queries, std::int64_t nq, int steps, const ChunkAt& chunk_at,
                                        TopK& running, std::vector<VoteResult>& votes) override {
    const Status status = search_chunks(queries, nq, steps, chunk_at, running, true);
    const bool on_device = lists_fill_ >= 0;
    lists_fill_ = -1;
    if (!status.ok()) return status.error();
    if (nq == 0 || !on_device) return false;
    return vote_device_lists(nq, running.k(), votes);
  }

  Status search(const float* queries, std::int64_t nq, const TrainingChunk& chunk, TopK& running) override {
    if (running.queries() < nq || running.k() < 1)
      return Error{ErrorKind::internal, {}, "knn", "running top-k lists do not match the query block"};
    if (nq == 0) return {};
    if (chunk.count == 0) {  // an empty shard; the lists may still have to come home
      if (keep_lists_ || lists_fill_ < 0) return {};
      lists_fill_ = -1;
      return download_lists(running, 0, static_cast<int>(nq));
    }
    if (chunk.count > INT_MAX || chunk.dims > INT_MAX || chunk.dims < 1)
      return Error{ErrorKind::usage, {}, "--train-chunk-rows", "a training chunk must hold fewer than 2^31 rows"};
    HB_CUDA_TRY(cudaSetDevice(device_), "cudaSetDevice");
    // Queries that gather() made on the device: the slot, once they are done.
    const int gathered = gather_.slot_of(queries);
    if (gathered >= 0) HB_CUDA_TRY(cudaStreamWaitEvent(stream_, gather_.done(gathered), 0), "cudaStreamWaitEvent");
    gathered_slot_ = gathered;
    Stopwatch host;
    auto device_chunk = upload_chunk(chunk);
    if (!device_chunk) return device_chunk.error();
    times_.training_up += host.lap();
    const int k = running.k();
    const bool unwritten = running.unwritten();
    if (chosen_ == SelectMethod::automatic) {
      chosen_ = runnable(gpu_automatic_method(options_.metric, chunk.dims, k), chunk.dims);
      log_select_method(select_method_name(chosen_));
    }
    const SelectMethod method = runnable(chosen_, chunk.dims);
    if (method == SelectMethod::bitonic && k > kk::bitonic_max_k())
      return Error{ErrorKind::usage, {}, "--select",
                   "bitonic selection on the GPU supports k up to " + std::to_string(kk::bitonic_max_k()) +
                       "; use --select fast"};
    const int block = block_rows(method, nq, chunk.count, chunk.dims, k);
    const void* lists_before = run_d_.as<float>();
    HB_TRY(reserve(method, block, chunk.count, chunk.dims, k));
    times_.buffers += host.lap();
    if (lists_fill_ >= 0 && run_d_.as<float>() != lists_before)
      return Error{ErrorKind::internal, {}, "knn", "device lists moved between the chunks of a sequence"};
    for (std::int64_t q0 = 0; q0 < nq; q0 += block) {
      const int rows = static_cast<int>(std::min<std::int64_t>(block, nq - q0));
      HB_TRY(open_span());
      // Queries packed into the pinned buffer or gathered on the device and searched
      // whole stay on the device for the next chunk; anything else is uploaded block by block.
      const int slot = gathered >= 0                         ? gathered
                       : queries == staging_[0].as<float>() ? 0
                       : queries == staging_[1].as<float>() ? 1
                                                            : -1;
      const bool whole = slot >= 0 && q0 == 0 && rows == nq;
      const std::int64_t fill = whole ? staging_fill_[slot] : -1;
      if (fill < 0 || fill != uploaded_fill_ || nq != uploaded_rows_ || chunk.dims != dims_)
        HB_TRY(upload_queries(queries + q0 * chunk.dims, rows, chunk.dims, gathered >= 0));
      HB_TRY(mark_span(1));
      uploaded_fill_ = fill;
      uploaded_rows_ = nq;
      // Within a sequence the lists of a whole-buffer search stay on the device.
      if (fill < 0 || fill != lists_fill_) HB_TRY(upload_lists(running, q0, rows, unwritten));
      const bool stay = keep_lists_ && fill >= 0;
      // fast and tensor finish a slab's rows at a time: their lists go home while the
      // next rows are searched (pinned host lists only: a pageable copy would stall the
      // launches).
      const bool send = !stay && slabbed(method) && pinned(running.memory().first) &&
                        pinned(running.memory().second);
      if (const Status ran = run(method, **device_chunk, chunk.first_index, rows, k, send ? &running : nullptr, q0);
          !ran) {
        cudaStreamSynchronize(copy_stream_);  // no copy may land in lists the caller frees
        return ran;
      }
      if (stay) {
        lists_fill_ = fill;
        continue;
      }
      lists_fill_ = -1;
      HB_TRY(download_lists(running, q0, rows, send));
    }
    return {};
  }

 private:
  // Every chunk in turn; the lists stay on the device between chunks (keep_lists_) and,
  // with `keep_last`, after the last one too (where they fit: lists_fill_ says so).
  Status search_chunks(const float* queries, std::int64_t nq, int steps, const ChunkAt& chunk_at, TopK& running,
                       bool keep_last) {
    lists_fill_ = -1;
    const auto each_chunk = [&]() -> Status {
      for (int step = 0; step < steps; ++step) {
        auto chunk = chunk_at(step);
        if (!chunk) return chunk.error();
        keep_lists_ = keep_last || step + 1 < steps;  // else the host copy is written after the last chunk
        HB_TRY(search(queries, nq, *chunk, running));
      }
      return {};
    };
    const Status status = each_chunk();
    keep_lists_ = false;
    return status;
  }

  // The vote of the block's lists as they are on the device (rows [0, nq) of run_d_).
  Result<bool> vote_device_lists(std::int64_t nq, int k, std::vector<VoteResult>& votes) {
    HB_TRY(mark_span(2));
    const auto rows = static_cast<std::size_t>(nq);
    HB_CUDA_TRY(vote_label_.reserve(rows * 2), "cudaMalloc (votes)");
    HB_CUDA_TRY(vote_confidence_.reserve(rows * 4), "cudaMalloc (votes)");
    HB_CUDA_TRY(host_label_.reserve(rows * 2), "pinning (votes)");
    HB_CUDA_TRY(host_confidence_.reserve(rows * 4), "pinning (votes)");
    const kk::VoteInputs in{run_d_.as<float>(),
                            run_i_.as<std::int64_t>(),
                            k,
                            vote_labels_.as<std::uint16_t>(),
                            static_cast<std::int64_t>(vote_rule_.labels.size()),
                            vote_rule_.classes,
                            metric(),
                            vote_rule_.weights == Weights::distance ? kk::Weights::distance : kk::Weights::uniform};
    HB_CUDA_TRY(kk::vote(in, static_cast<int>(nq), vote_label_.as<std::uint16_t>(), vote_confidence_.as<float>(),
                         stream_),
                "vote kernel");
    HB_CUDA_TRY(cudaMemcpyAsync(host_label_.as<std::uint16_t>(), vote_label_.as<std::uint16_t>(), rows * 2,
                                cudaMemcpyDeviceToHost, stream_),
                "copy votes home");
    HB_CUDA_TRY(cudaMemcpyAsync(host_confidence_.as<float>(), vote_confidence_.as<float>(), rows * 4,
                                cudaMemcpyDeviceToHost, stream_),
                "copy votes home");
    HB_TRY(mark_span(3));
    HB_CUDA_TRY(cudaStreamSynchronize(stream_), "vote");
    votes.resize(rows);
    for (std::size_t q = 0; q < rows; ++q) votes[q] = {host_label_.as<std::uint16_t>()[q], host_confidence_.as<float>()[q]};
    HB_TRY(close_span());
    return true;
  }

  static bool slabbed(SelectMethod method) { return method == SelectMethod::fast || method == SelectMethod::tensor; }

  // tensor's scan path (kernels/knn/tensor_scan.cu) where it applies: the same lists as
  // its slabs, without writing a product to memory.
  bool scans(std::int64_t dims, int k) const {
    const std::int64_t most = options_.tensor_scan_max_dims != 0 ? options_.tensor_scan_max_dims
                                                                 : kk::kTensorScanMaxDims;
    return dims <= std::min<std::int64_t>(most, kk::kTensorScanMaxDims) && k <= kk::kTensorScanMaxK;
  }

  // The method that runs for `chosen`: tensor only where its bound holds (euclidean,
  // up to tensor_max_dims() bands), fast otherwise (the same lists).
  SelectMethod runnable(SelectMethod chosen, std::int64_t dims) const {
    const bool tensor_fits = metric() == kk::Metric::euclidean && dims <= kk::tensor_max_dims();
    return chosen == SelectMethod::tensor && !tensor_fits ? SelectMethod::fast : chosen;
  }

  // Rows of a slab (or the options' fast_slab_rows): kWarpPathRows for fast's warp
  // path, kBlockPathWaves waves of its block path's kernel, kTensorRows for tensor;
  // fewer when a quarter of the work budget cannot hold 1024 columns of them.
  int slab_rows(SelectMethod method, int k) const {
    if (options_.fast_slab_rows > 0) return options_.fast_slab_rows;
    const int most = method == SelectMethod::tensor       ? kTensorRows
                     : k > kk::fused_warp_max_k() ? block_path_rows_
                                                  : kWarpPathRows;
    return static_cast<int>(std::clamp<std::int64_t>(work_budget_ / 4 / 4 / 1024, 256, most));
  }

  // Training rows of `dims` bands that fill a third of the L2 (kTensorL2Share).
  std::int64_t l2_share_cols(std::int64_t dims) const { return l2_bytes_ / kTensorL2Share / (4 * dims); }

  // Columns of a slab: at most a quarter of the work budget; tensor's from k = 32 on, a
  // block of training rows of `dims` bands filling at most a third of the L2 (see
  // kTensorL2Share), and at least 16 k columns, so that the filter's sampled bound holds
  // for the first block (it gives up where a row's 2048 samples would need more than a
  // quarter of them).
  int slab_cols(SelectMethod method, int k, std::int64_t dims) const {
    const int most = static_cast<int>(
        std::clamp<std::int64_t>(slab_bytes(method, k) / 4 / slab_rows(method, k) / 1024 * 1024, 1024, 1 << 20));
    const bool blocks = method == SelectMethod::tensor && k >= kTensorBlocksFromK && options_.fast_slab_bytes <= 0;
    if (!blocks || l2_bytes_ <= 0) return most;
    const std::int64_t in_l2 = std::max(l2_share_cols(dims), 16 * std::int64_t{k});
    return static_cast<int>(std::clamp<std::int64_t>(in_l2 / 1024 * 1024, 1024, most));
  }

  // A slab's bytes: at most a quarter of the work budget (or the options' fast_slab_bytes).
  std::int64_t slab_bytes(SelectMethod method, int k) const {
    if (options_.fast_slab_bytes > 0) return options_.fast_slab_bytes;
    const bool large = method == SelectMethod::tensor || k > kk::fused_warp_max_k();
    return std::min(large ? kBlockSlabBytes : kWarpSlabBytes, work_budget_ / 4);
  }

  // A row of a whole-chunk slab padded to whole float4s, so that the bound's scan
  // (tensor_chunk_bound) loads four columns at a time on every row.
  static std::int64_t bounded_ld(std::int64_t cols) { return (cols + 3) / 4 * 4; }

  // tensor from kTensorChunkBoundFromK, where a chunk of `cols` rows spans more than one
  // column block (or, below kTensorBlocksFromK, would) and a slab of the rows' products
  // with the whole chunk fits a slab's bytes: each row is first bounded over the whole
  // chunk (run_tensor_bounded).
  bool tensor_bounds_chunk(SelectMethod method, int k, std::int64_t cols, std::int64_t dims) const {
    const int from_k =
        options_.tensor_chunk_bound_from_k > 0 ? options_.tensor_chunk_bound_from_k : kTensorChunkBoundFromK;
    const bool outgrows_l2 = k >= kTensorBlocksFromK
                                 ? slab_cols(method, k, dims) < cols
                                 : l2_bytes_ > 0 && l2_share_cols(dims) < cols;
    return method == SelectMethod::tensor && k >= from_k && outgrows_l2 && cols >= 2 * kk::tensor_sample_run() &&
           std::int64_t{slab_rows(method, k)} * bounded_ld(cols) * 4 <= slab_bytes(method, k);
  }

  // The slab tile for a chunk of `cols` rows: one slab's floats (two tiles take turns).
  std::int64_t slab_tile(SelectMethod method, int k, std::int64_t cols, std::int64_t dims) const {
    const std::int64_t width =
        tensor_bounds_chunk(method, k, cols, dims) ? bounded_ld(cols)
                                                   : std::min<std::int64_t>(slab_cols(method, k, dims), cols);
    return std::int64_t{slab_rows(method, k)} * width;
  }

  kk::Lists lists(const cuda::DeviceBuffer& d, const cuda::DeviceBuffer& i, int k) const {
    return {d.as<float>(), i.as<std::int64_t>(), k};
  }

  // Query rows per block: the lists (running, candidates, scratch), the queries and,
  // for kmin/bitonic, a full distance row per query within the work budget.
  int block_rows(SelectMethod method, std::int64_t nq, std::int64_t cols, std::int64_t dims, int k) const {
    const bool full_rows = !slabbed(method);
    const std::int64_t per_query = dims * 4 + 4 + 3 * std::int64_t{k} * 12 + (full_rows ? cols * 4 : 0);
    const std::int64_t tiles = full_rows ? 0 : 2 * slab_tile(method, k, cols, dims) * 4;
    const std::int64_t budget = std::max(work_budget_ - tiles, per_query);
    return static_cast<int>(std::clamp<std::int64_t>(budget / per_query, 1, std::min<std::int64_t>(nq, 1 << 24)));
  }

  Status reserve(SelectMethod method, int rows, std::int64_t cols, std::int64_t dims, int k) {
    const auto list_slots = static_cast<std::size_t>(rows) * static_cast<std::size_t>(k);
    const bool full_rows = !slabbed(method);
    // kmin/bitonic: one tile of whole rows; fast, tensor: two slabs (one being filled, one read).
    const std::size_t tile = full_rows ? static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols)
                                       : static_cast<std::size_t>(slab_tile(method, k, cols, dims));
    if (method == SelectMethod::tensor) {
      HB_CUDA_TRY(tensor_kept_.reserve(static_cast<std::size_t>(slab_rows(method, k)) * 8), "cudaMalloc (kept pairs)");
      HB_CUDA_TRY(tensor_bound_.reserve(static_cast<std::size_t>(rows) * 4), "cudaMalloc (row bounds)");
      HB_CUDA_TRY(tensor_count_.reserve(static_cast<std::size_t>(rows) * 4), "cudaMalloc (row bounds)");
    }
    for (auto* b : {&run_d_, &cand_d_, &scratch_d_}) HB_CUDA_TRY(b->reserve(list_slots * 4), "cudaMalloc (lists)");
    for (auto* b : {&run_i_, &cand_i_, &scratch_i_}) HB_CUDA_TRY(b->reserve(list_slots * 8), "cudaMalloc (lists)");
    HB_CUDA_TRY(queries_.reserve(static_cast<std::size_t>(rows) * static_cast<std::size_t>(dims) * 4),
                "cudaMalloc (queries)");
    HB_CUDA_TRY(query_norms_.reserve(static_cast<std::size_t>(rows) * 4), "cudaMalloc (norms)");
    HB_CUDA_TRY(tiles_[0].reserve(tile * 4), "cudaMalloc (distance tile)");
    if (!full_rows) HB_CUDA_TRY(tiles_[1].reserve(tile * 4), "cudaMalloc (distance tile)");
    return {};
  }

  Result<const DeviceChunk*> upload_chunk(const TrainingChunk& chunk) {
    auto it = cache_.find(chunk.first_index);
    if (it != cache_.end() && it->second->count == chunk.count && it->second->dims == chunk.dims)
      return it->second.get();
    if (it != cache_.end()) {  // another chunk under the same first index: replace it
      cached_bytes_ -= it->second->bytes();
      cache_.erase(it);
    }
    const std::int64_t bytes = chunk.count * chunk.dims * 4 + chunk.count * 4;
    DeviceChunk* slot = &streamed_;
    if (cached_bytes_ + bytes <= cache_budget_) {
      slot = cache_.emplace(chunk.first_index, std::make_unique<DeviceChunk>()).first->second.get();
      cached_bytes_ += bytes;
    }
    slot->count = chunk.count;
    slot->dims = chunk.dims;
    HB_CUDA_TRY(slot->features.reserve(static_cast<std::size_t>(chunk.count * chunk.dims) * 4), "cudaMalloc (training)");
    HB_CUDA_TRY(slot->norms.reserve(static_cast<std::size_t>(chunk.count) * 4), "cudaMalloc (training)");
    HB_CUDA_TRY(cudaMemcpyAsync(slot->features.as<float>(), chunk.features,
                                static_cast<std::size_t>(chunk.count * chunk.dims) * 4, cudaMemcpyHostToDevice, stream_),
                "copy training rows");
    HB_CUDA_TRY(kk::row_norms(metric(), slot->features.as<float>(), static_cast<int>(chunk.count),
                              static_cast<int>(chunk.dims), slot->norms.as<float>(), stream_),
                "row norms kernel");
    HB_CUDA_TRY(slot->largest_norm.reserve(4), "cudaMalloc (training)");
    HB_CUDA_TRY(kk::largest_norm(slot->norms.as<float>(), static_cast<int>(chunk.count),
                                 slot->largest_norm.as<float>(), stream_),
                "largest norm kernel");
    HB_CUDA_TRY(cudaStreamSynchronize(stream_), "training upload");
    return static_cast<const DeviceChunk*>(slot);
  }

  // The block's queries: host rows copied up, or rows gather() left on the device used
  // where they are; then their norms.
  Status upload_queries(const float* queries, int rows, std::int64_t dims, bool on_device) {
    dims_ = static_cast<int>(dims);
    uploaded_fill_ = -1;
    block_queries_ = on_device ? queries : queries_.as<float>();
    if (!on_device)
      HB_CUDA_TRY(cudaMemcpyAsync(queries_.as<float>(), queries, static_cast<std::size_t>(rows * dims) * 4,
                                  cudaMemcpyHostToDevice, stream_),
                  "copy queries");
    HB_CUDA_TRY(kk::row_norms(metric(), block_queries_, rows, dims_, query_norms_.as<float>(), stream_),
                "row norms kernel");
    return {};
  }

  // Lists that are still empty (the first chunk) are made on the device, not copied.
  // `unwritten`: running's memory was not written when the search began (the first
  // block's lists coming home mark it written; the other blocks' rows are not yet).
  Status upload_lists(const TopK& running, std::int64_t q0, int rows, bool unwritten) {
    const int k = running.k();
    if (unwritten) {  // empty, their memory never written (makes_empty_lists)
      HB_CUDA_TRY(kk::fill_empty(lists(run_d_, run_i_, k), rows, stream_), "fill kernel");
      return {};
    }
    bool empty = true;
    for (std::int64_t q = q0; q < q0 + rows && empty; ++q) empty = running.indices(q)[0] == kNoIndex;
    if (empty) {
      HB_CUDA_TRY(kk::fill_empty(lists(run_d_, run_i_, k), rows, stream_), "fill kernel");
      return {};
    }
    const auto slots = static_cast<std::size_t>(rows) * static_cast<std::size_t>(k);
    HB_CUDA_TRY(cudaMemcpyAsync(run_d_.as<float>(), running.distances(q0), slots * 4, cudaMemcpyHostToDevice, stream_),
                "copy lists");
    HB_CUDA_TRY(cudaMemcpyAsync(run_i_.as<std::int64_t>(), running.indices(q0), slots * 8, cudaMemcpyHostToDevice,
                                stream_),
                "copy lists");
    return {};
  }

  // Device list rows [device_row, device_row + rows) to running's rows from host_row.
  Status copy_rows_home(TopK& running, std::int64_t host_row, int device_row, int rows, cudaStream_t stream) {
    const int k = running.k();
    const auto offset = static_cast<std::int64_t>(device_row) * k;
    const auto slots = static_cast<std::size_t>(rows) * static_cast<std::size_t>(k);
    const auto [distances, indices] = running.rows_to_write(host_row);
    HB_CUDA_TRY(cudaMemcpyAsync(distances, run_d_.as<float>() + offset, slots * 4, cudaMemcpyDeviceToHost, stream),
                "copy lists back");
    HB_CUDA_TRY(cudaMemcpyAsync(indices, run_i_.as<std::int64_t>() + offset, slots * 8,
                                cudaMemcpyDeviceToHost, stream),
                "copy lists back");
    return {};
  }

  // Rows [q0, q0 + rows) of the block, whose lists are final, go to running's rows
  // [first + q0, ...) on the copy stream, behind the main stream's work so far.
  Status send_rows_home(TopK& running, std::int64_t first, int q0, int rows) {
    HB_CUDA_TRY(cudaEventRecord(rows_done_, stream_), "cudaEventRecord");
    HB_CUDA_TRY(cudaStreamWaitEvent(copy_stream_, rows_done_, 0), "cudaStreamWaitEvent");
    return copy_rows_home(running, first + q0, q0, rows, copy_stream_);
  }

  static bool pinned(const void* host) {
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, host) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return attributes.type == cudaMemoryTypeHost;
  }

  // The end of a block: its lists copied to running's rows from q0, or, when they were
  // sent home slab by slab (`sent`), the copy stream waited for.
  Status download_lists(TopK& running, std::int64_t q0, int rows, bool sent = false) {
    HB_TRY(mark_span(2));
    if (sent) {
      HB_CUDA_TRY(cudaEventRecord(home_done_, copy_stream_), "cudaEventRecord");
      HB_CUDA_TRY(cudaStreamWaitEvent(stream_, home_done_, 0), "cudaStreamWaitEvent");
    } else {
      HB_TRY(copy_rows_home(running, q0, 0, rows, stream_));
    }
    HB_TRY(mark_span(3));
    HB_CUDA_TRY(cudaStreamSynchronize(stream_), "search");
    return close_span();
  }

  // GPU time of a query block, from its first upload to its lists' return, split by
  // events on the main stream: what the host's wall time in search() is compared with.
  Status open_span() {
    if (span_open_) return {};
    span_open_ = true;
    span_marked_ = 0;
    return mark_span(0);
  }
  Status mark_span(int at) {
    if (!span_open_ || at < span_marked_) return {};
    for (int e = span_marked_; e <= at; ++e) HB_CUDA_TRY(cudaEventRecord(span_[e], stream_), "cudaEventRecord");
    span_marked_ = at + 1;
    return {};
  }
  Status close_span() {
    if (!span_open_ || span_marked_ < 4) return {};
    span_open_ = false;
    float ms[3] = {0, 0, 0};
    for (int e = 0; e < 3; ++e) HB_CUDA_TRY(cudaEventElapsedTime(&ms[e], span_[e], span_[e + 1]), "cudaEventElapsedTime");
    if (gathered_slot_ >= 0) {  // its gathering is done: the stream waited for it
      auto seconds = gather_.take_gpu_seconds(gathered_slot_);
      if (!seconds) return seconds.error();
      times_.gather += *seconds;
    }
    gathered_slot_ = -1;
    times_.upload += ms[0] / 1e3;
    times_.search += ms[1] / 1e3;
    if (times_.spans == 0) times_.first_search = ms[1] / 1e3;
    times_.lists += ms[2] / 1e3;
    ++times_.spans;
    return {};
  }

  // Tiles and uploads become free for the SGEMM stream as of now on the main stream.
  Status open_tiles() {
    for (auto* e : tile_free_) HB_CUDA_TRY(cudaEventRecord(e, stream_), "cudaEventRecord");
    return {};
  }

  // On the SGEMM stream, once tile `slot` is free: tile[r * ldc + c] = q_(q0 + r) .
  // t_(c0 + c) (C[cols x rows] column-major). The main stream then waits for it.
  // `tf32`: through the tensor cores (the tensor method's approximate products), from
  // the copies round_to_tf32 made.
  Status inner_products(const DeviceChunk& chunk, int q0, int rows, int c0, int cols, int ldc, int slot,
                        bool tf32 = false) {
    HB_CUDA_TRY(cudaStreamWaitEvent(gemm_stream_, tile_free_[slot], 0), "cudaStreamWaitEvent");
    const float one = 1.0f, zero = 0.0f;
    const float* train = (tf32 ? tf32_train_.as<float>() : chunk.features.as<float>()) +
                         static_cast<std::int64_t>(c0) * dims_;
    const float* queries = (tf32 ? tf32_queries_.as<float>() : block_queries_) + static_cast<std::int64_t>(q0) * dims_;
    if (tf32)
      HB_CUDA_TRY(cublasGemmEx(blas_, CUBLAS_OP_T, CUBLAS_OP_N, cols, rows, dims_, &one, train, CUDA_R_32F,
                               dims_, queries, CUDA_R_32F, dims_, &zero, tiles_[slot].as<float>(), CUDA_R_32F,
                               ldc, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmEx (TF32)");
    else
      HB_CUDA_TRY(cublasSgemm(blas_, CUBLAS_OP_T, CUBLAS_OP_N, cols, rows, dims_, &one, train, dims_, queries, dims_,
                              &zero, tiles_[slot].as<float>(), ldc),
                  "cublasSgemm");
    HB_CUDA_TRY(cudaEventRecord(tile_ready_[slot], gemm_stream_), "cudaEventRecord");
    HB_CUDA_TRY(cudaStreamWaitEvent(stream_, tile_ready_[slot], 0), "cudaStreamWaitEvent");
    return {};
  }

  // After the main stream's last reader of tile `slot`.
  Status release_tile(int slot) {
    HB_CUDA_TRY(cudaEventRecord(tile_free_[slot], stream_), "cudaEventRecord");
    return {};
  }

  kk::DistanceInputs inputs(const DeviceChunk& chunk, int q0) const {
    return {metric(),
            block_queries_ + static_cast<std::int64_t>(q0) * dims_, query_norms_.as<float>() + q0,
            chunk.features.as<float>(), chunk.norms.as<float>(), dims_, chunk.largest_norm.as<float>()};
  }

  // The lists of a slab's rows from row q0 of the block.
  static kk::Lists lists_from(const cuda::DeviceBuffer& d, const cuda::DeviceBuffer& i, int q0, int k) {
    const auto offset = static_cast<std::int64_t>(q0) * k;
    return {d.as<float>() + offset, i.as<std::int64_t>() + offset, k};
  }

  // tensor: column blocks outer, so that a block's training rows stay in the L2 while
  // every row slab is searched against them; a slab's rows are final, and go home, in
  // the last block.
  Status run_tensor(const DeviceChunk& chunk, std::int64_t first_index, int rows, int k, TopK* home,
                    std::int64_t home_first) {
    if (scans(chunk.dims, k)) {
      HB_CUDA_TRY(kk::tensor_scan(inputs(chunk, 0), rows, static_cast<int>(chunk.count), first_index,
                                  lists_from(run_d_, run_i_, 0, k), stream_),
                  "tensor scan kernel");
      return home ? send_rows_home(*home, home_first, 0, rows) : Status{};
    }
    HB_TRY(round_to_tf32(chunk, rows));
    const int cols = static_cast<int>(chunk.count);
    const int rows_per_slab = slab_rows(SelectMethod::tensor, k);
    if (tensor_bounds_chunk(SelectMethod::tensor, k, cols, chunk.dims))
      return run_tensor_bounded(chunk, first_index, rows, k, home, home_first, rows_per_slab);
    const int cols_per_slab = std::min(slab_cols(SelectMethod::tensor, k, chunk.dims), cols);
    int slot = 0;
    for (int c0 = 0; c0 < cols; c0 += cols_per_slab) {
      const int slab = std::min(cols_per_slab, cols - c0);
      for (int q0 = 0; q0 < rows; q0 += rows_per_slab) {
        const int sub = std::min(rows_per_slab, rows - q0);
        HB_TRY(inner_products(chunk, q0, sub, c0, slab, cols_per_slab, slot, true));
        HB_CUDA_TRY(kk::select_tensor(inputs(chunk, q0), shares_from(q0, chunk.count), tiles_[slot].as<float>(), sub,
                                      slab, cols_per_slab, c0, first_index, lists_from(run_d_, run_i_, q0, k),
                                      lists_from(scratch_d_, scratch_i_, q0, k), tensor_kept_.as<int>(), {},
                                      stream_),
                    "tensor selection kernels");
        HB_TRY(release_tile(slot));
        slot ^= 1;
        if (home && c0 + slab == cols) HB_TRY(send_rows_home(*home, home_first, q0, sub));
      }
    }
    return {};
  }

  // tensor: the chunk's and the block's rows rounded to TF32 by nearest, the GEMM's
  // inputs: the bound then holds whether the GEMM's own conversion rounds or truncates,
  // and is half as wide as one that must allow truncation (tensor_bound.hpp); with each
  // row's share of the bound's scale from its own rounding, and the chunk's largest.
  // Made again for every block (bench_knn's rates include it). The two copies are
  // outside the work budget: a chunk's rows (90 MB at 10^5 x 224) and a block's.
  Status round_to_tf32(const DeviceChunk& chunk, int rows) {
    const std::int64_t train = chunk.count * chunk.dims, queries = std::int64_t{rows} * dims_;
    HB_CUDA_TRY(tf32_train_.reserve(static_cast<std::size_t>(train) * 4), "cudaMalloc (TF32 training rows)");
    HB_CUDA_TRY(tf32_queries_.reserve(static_cast<std::size_t>(queries) * 4), "cudaMalloc (TF32 queries)");
    HB_CUDA_TRY(train_shares_.reserve(static_cast<std::size_t>(chunk.count + 1) * 4), "cudaMalloc (TF32 shares)");
    HB_CUDA_TRY(query_shares_.reserve(static_cast<std::size_t>(rows) * 4), "cudaMalloc (TF32 shares)");
    HB_CUDA_TRY(kk::tensor_round_rows(chunk.features.as<float>(), tf32_train_.as<float>(), chunk.count,
                                      static_cast<int>(chunk.dims), train_shares_.as<float>(), stream_),
                "tensor rounding kernel");
    HB_CUDA_TRY(kk::largest_norm(train_shares_.as<float>(), static_cast<int>(chunk.count),
                                 train_shares_.as<float>() + chunk.count, stream_),
                "largest share kernel");
    HB_CUDA_TRY(kk::tensor_round_rows(block_queries_, tf32_queries_.as<float>(), rows, dims_, query_shares_.as<float>(),
                                      stream_),
                "tensor rounding kernel");
    // The GEMMs run on their own stream: it waits for the copies.
    HB_CUDA_TRY(cudaEventRecord(inputs_rounded_, stream_), "cudaEventRecord");
    HB_CUDA_TRY(cudaStreamWaitEvent(gemm_stream_, inputs_rounded_, 0), "cudaStreamWaitEvent");
    return {};
  }

  // The rounding shares of a slab's rows from row q0 of the block, and the chunk's largest.
  kk::RoundingShares shares_from(int q0, std::int64_t chunk_rows) const {
    return {query_shares_.as<float>() + q0, train_shares_.as<float>() + chunk_rows};
  }

  // The largest prime at most n (1 for n < 2): a sampling stride that no period of the
  // rows' layout below it divides (training rows dealt out class by class repeat every
  // classes rows; a stride of 48 sampled one class of 16).
  static int prime_at_most(int n) {
    for (int p = n; p >= 2; --p) {
      bool prime = true;
      for (int d = 2; d * d <= p && prime; ++d) prime = p % d != 0;
      if (prime) return p;
    }
    return 1;
  }

  // tensor from kTensorChunkBoundFromK (tensor_bounds_chunk): row slabs outer. One TF32
  // GEMM gives a slab's products with the whole chunk; each row is bounded by the
  // sampled k-th closest of training rows spread over the chunk (runs of adjacent rows,
  // a prime stride apart), and the bound refined and proven by a count of the chunk's
  // pairs within it (a row with fewer than k keeps the filter's own bound; the kernel
  // is tensor_chunk_bound); then the slab is filtered and finished over the whole chunk
  // in one pass: a row's kept pairs are sorted and merged once, not once a column block.
  // Against L2-sized column blocks selected in turn from the same products (H200,
  // d = 224, one call, two rounds): k = 128 1.58 -> 1.80 M queries/s, k = 1024 0.96 ->
  // 0.99-1.00 M, k = 4096 0.411 -> 0.414-0.416 M; the exact stage's gathers then range
  // over the whole chunk, beyond the L2, and its kernel still took 9 % less time (ncu,
  // k = 1024). Blocks outer with a second GEMM pass that only counted ran slower (H200,
  // d = 224, 2048 samples: k = 1024 0.61 against 0.78 M queries/s).
  Status run_tensor_bounded(const DeviceChunk& chunk, std::int64_t first_index, int rows, int k, TopK* home,
                            std::int64_t home_first, int rows_per_slab) {
    const int cols = static_cast<int>(chunk.count), ld = static_cast<int>(bounded_ld(cols));
    const int wanted = options_.tensor_chunk_samples > 0 ? options_.tensor_chunk_samples : kTensorChunkSamples;
    const int run = kk::tensor_sample_run();
    // Runs of `run` columns a prime stride apart, at least 2 run (so that a prime of at
    // least `run` lies below it): a chunk too small for the wanted runs takes fewer.
    const int runs = std::max(1, std::min(wanted, kk::tensor_bound_samples()) / run);
    const int taken = std::min(runs, cols / (2 * run));
    const int stride = prime_at_most(cols / taken);
    const int samples = taken * run;
    // The bound's count pass keeps a row's pairs itself, sparing the filter's pass over
    // the slab, where k leaves room for them: up to half the capacity.
    int* pairs = nullptr;
    if (k <= kk::tensor_pair_capacity() / 2) {
      HB_CUDA_TRY(tensor_pairs_.reserve(static_cast<std::size_t>(rows_per_slab) * kk::tensor_pair_capacity() * 8),
                  "cudaMalloc (kept pairs)");
      pairs = tensor_pairs_.as<int>();
    }
    int slot = 0;
    for (int q0 = 0; q0 < rows; q0 += rows_per_slab) {
      const int sub = std::min(rows_per_slab, rows - q0);
      HB_TRY(inner_products(chunk, q0, sub, 0, cols, ld, slot, true));
      float* products = tiles_[slot].as<float>();
      const kk::ChunkBound bound{tensor_bound_.as<float>() + q0, tensor_count_.as<int>() + q0, pairs};
      const kk::Lists running = lists_from(run_d_, run_i_, q0, k);
      HB_CUDA_TRY(kk::tensor_chunk_bound(inputs(chunk, q0), shares_from(q0, cols), products, sub, cols, ld,
                                         samples, stride, running, tensor_kept_.as<int>(), bound, stream_),
                  "tensor bound kernel");
      HB_CUDA_TRY(kk::select_tensor(inputs(chunk, q0), shares_from(q0, cols), products, sub, cols, ld, 0,
                                    first_index, running, lists_from(scratch_d_, scratch_i_, q0, k),
                                    tensor_kept_.as<int>(), bound, stream_),
                  "tensor selection kernels");
      HB_TRY(release_tile(slot));
      slot ^= 1;
      if (home) HB_TRY(send_rows_home(*home, home_first, q0, sub));
    }
    return {};
  }

  // One query block (queries and running lists already on the device) against a chunk.
  // With `home`, fast sends the lists of each slab's rows to home's rows from `home_first`.
  Status run(SelectMethod method, const DeviceChunk& chunk, std::int64_t first_index, int rows, int k,
             TopK* home = nullptr, std::int64_t home_first = 0) {
    const int cols = static_cast<int>(chunk.count);
    HB_TRY(open_tiles());
    if (method == SelectMethod::tensor) return run_tensor(chunk, first_index, rows, k, home, home_first);
    if (method == SelectMethod::fast) {
      int slot = 0;
      const int rows_per_slab = slab_rows(method, k);
      for (int q0 = 0; q0 < rows; q0 += rows_per_slab) {
        const int sub = std::min(rows_per_slab, rows - q0);
        const kk::Lists running = lists_from(run_d_, run_i_, q0, k);
        const kk::Lists scratch = lists_from(scratch_d_, scratch_i_, q0, k);
        const int cols_per_slab = std::min(slab_cols(method, k, chunk.dims), cols);
        for (int c0 = 0; c0 < cols; c0 += cols_per_slab) {
          const int slab = std::min(cols_per_slab, cols - c0);
          const bool first = c0 == 0, last = c0 + slab == cols;
          const auto place = first && last ? kk::SlabPlace::only
                             : first       ? kk::SlabPlace::first
                             : last        ? kk::SlabPlace::last
                                           : kk::SlabPlace::middle;
          HB_TRY(inner_products(chunk, q0, sub, c0, slab, cols_per_slab, slot, false));
          HB_CUDA_TRY(kk::select_fused(inputs(chunk, q0), tiles_[slot].as<float>(), sub, slab, cols_per_slab, c0,
                                       first_index, running, scratch, place, stream_),
                      "fused selection kernel");
          HB_TRY(release_tile(slot));
          slot ^= 1;
        }
        if (home) HB_TRY(send_rows_home(*home, home_first, q0, sub));
      }
      return {};
    }
    HB_TRY(inner_products(chunk, 0, rows, 0, cols, cols, 0));
    const float* tile = tiles_[0].as<float>();
    HB_CUDA_TRY(kk::finish_distances(inputs(chunk, 0), tiles_[0].as<float>(), rows, cols, cols, 0, stream_),
                "distance kernel");
    const kk::Lists candidates = lists(cand_d_, cand_i_, k);
    if (method == SelectMethod::kmin)
      HB_CUDA_TRY(kk::select_kmin(tile, rows, cols, cols, first_index, candidates, stream_), "kmin kernel");
    else
      HB_CUDA_TRY(kk::select_bitonic(tile, rows, cols, cols, first_index, candidates, stream_), "bitonic kernel");
    HB_TRY(release_tile(0));
    HB_CUDA_TRY(kk::merge_lists(lists(run_d_, run_i_, k), candidates, std::min(k, cols), rows,
                                lists(scratch_d_, scratch_i_, k), stream_),
                "merge kernel");
    return {};
  }

  kk::Metric metric() const { return options_.metric == Metric::cosine ? kk::Metric::cosine : kk::Metric::euclidean; }

  SearchOptions options_;
  SelectMethod chosen_;
  int device_;
  int l2_bytes_ = 0;  // the GPU's L2 cache (tensor's column blocks)
  cudaStream_t stream_ = nullptr;       // uploads, kernels, downloads
  cudaStream_t gemm_stream_ = nullptr;  // the SGEMMs
  cudaStream_t copy_stream_ = nullptr;  // lists home while later rows are searched
  cudaEvent_t rows_done_ = nullptr;     // a slab's rows searched (main stream)
  cudaEvent_t inputs_rounded_ = nullptr;  // tensor: the GEMMs' TF32 inputs made (main stream)
  cudaEvent_t home_done_ = nullptr;     // every row sent home (copy stream)
  cudaEvent_t tile_free_[2] = {nullptr, nullptr};
  cudaEvent_t tile_ready_[2] = {nullptr, nullptr};
  cublasHandle_t blas_ = nullptr;
  int block_path_rows_ = 1024;  // fast slab rows for k > fused_warp_max_k()
  std::int64_t cache_budget_ = 0;
  std::int64_t work_budget_ = 0;
  std::int64_t cached_bytes_ = 0;
  std::map<std::int64_t, std::unique_ptr<DeviceChunk>> cache_;
  DeviceChunk streamed_;
  int dims_ = 0;
  cuda::PinnedBuffer staging_[2];     // query_buffer(): pinned, uploaded once per fill
  std::int64_t staging_fill_[2] = {0, 0};  // each slot's fill: a new number at every query_buffer() call
  std::atomic<std::int64_t> fills_{0};  // gather() counts from the worker thread
  std::int64_t uploaded_fill_ = -1;   // the fill whose queries are on the device; -1: none
  std::int64_t uploaded_rows_ = 0;
  bool keep_lists_ = false;           // search_sequence: more chunks follow for these queries
  VoteRule vote_rule_;                // prepare_votes: the rule, its labels on the device
  cuda::DeviceBuffer vote_labels_, vote_label_, vote_confidence_;
  cuda::PinnedBuffer host_label_, host_confidence_;
  std::int64_t lists_fill_ = -1;      // the fill whose running lists are on the device only; -1: none
  cuda::DeviceBuffer queries_, query_norms_, tiles_[2];
  const float* block_queries_ = nullptr;  // the current block's queries: queries_ or a gathered slot
  DeviceQueryGather gather_;  // (list_and_)gather(): query tiles up, listed and gathered on a stream of their own
  int gathered_slot_ = -1;  // the slot the open span searches, if gathered
  cuda::DeviceBuffer run_d_, run_i_, cand_d_, cand_i_, scratch_d_, scratch_i_;
  cuda::DeviceBuffer tensor_kept_;  // tensor: each slab row's kept pairs and rescan flag
  cuda::DeviceBuffer tensor_bound_, tensor_count_;  // tensor: each block row's chunk bound and its count
  cuda::DeviceBuffer tensor_pairs_;  // tensor: a slab row's pairs kept by the chunk bound (outside the work budget)
  cuda::DeviceBuffer tf32_train_, tf32_queries_;    // tensor: the chunk and the block rounded to TF32
  cuda::DeviceBuffer train_shares_, query_shares_;  // tensor: their rows' shares of the bound (and the chunk's largest)
  cudaEvent_t span_[4] = {nullptr, nullptr, nullptr, nullptr};  // opened, queries up, searched, lists home
  bool span_open_ = false;
  int span_marked_ = 0;
  SearchTimes times_;
};

}  // namespace

Result<std::unique_ptr<KnnSearch>> make_cuda_knn_search(const SearchOptions& options, int device) {
  device = resolve_gpu(device);
  HB_TRY(::hb::cuda::require_device(device));
  auto search = std::make_unique<CudaKnnSearch>(options, device);
  HB_TRY(search->init());
  return std::unique_ptr<KnnSearch>(std::move(search));
}

}  // namespace hb::knn
