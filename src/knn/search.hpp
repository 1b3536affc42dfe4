// The backend seam of the KNN classifier: distances + k-selection for a block of
// queries against one chunk of training rows, folded into running top-k lists.
//
// The contract every backend meets (CPU: cpu_search.cpp; CUDA: cuda_search.cu with the
// kernels of kernels/knn):
//  * Inputs are host pointers to FP32 row-major data that the orchestration has
//    already prepared: samples widened to FP32 (knn/features.hpp), bad bands
//    dropped, ignored pixels removed, and, for Euclidean, both sides centred on the
//    training mean. Nothing about files or interleaves reaches the seam; a narrow
//    integer tile may be handed over raw, its valid pixels listed and its queries
//    gathered by the backend (list_and_gather(), whose result search() also takes).
//  * `chunk.first_index` is the global training index of the chunk's row 0. The same
//    chunk (same first_index, same contents) is passed for every query block of a run,
//    so a backend may upload each chunk once and cache it by first_index.
//  * Distances: Metric::euclidean ranks by squared Euclidean distance (|q|^2 + |t|^2 -
//    2 q.t with one GEMM); values below 2 * dims * FLT_EPSILON * (|q|^2 + |t|^2) are
//    recomputed directly in FP64 so that duplicates are exactly 0 (do the same in the
//    kernel that adds the norms). Metric::cosine: 1 - q.t/(|q||t|), clamped to [0, 2],
//    a zero vector at distance 1. distance.hpp has the reference implementation.
//  * Ordering: a candidate is (distance, global index); smaller distance first, equal
//    distances to the lower index. `running` must end up holding, per query, the k
//    lexicographically smallest pairs among its previous content and the chunk's
//    rows, ascending; unfilled slots stay (kNoDistance, kNoIndex). Tests compare every
//    backend and method against a float64 brute force and against each other.
//  * Selection: SelectMethod::kmin / bitonic / fast as in select.hpp; automatic lets
//    the backend choose (GS_KNN: time kmin against bitonic on a sample row and keep the
//    faster); select_method() then reports the choice. k may be up to 4096 or more.
//  * Errors are values (Status): out of device memory is ErrorKind::resource.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <memory_resource>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "io/tile.hpp"
#include "src/backend/backend.hpp"
#include "src/base/data_type.hpp"
#include "src/base/error.hpp"
#include "src/classify/features.hpp"
#include "src/knn/distance.hpp"
#include "src/knn/select.hpp"
#include "src/knn/batch_vote.hpp"
#include "src/knn/topk.hpp"

namespace hb::knn {

struct TrainingChunk {
  const float* features = nullptr;  // [count, dims] row-major, prepared like the queries
  std::int64_t count = 0;
  std::int64_t dims = 0;
  std::int64_t first_index = 0;     // global training index of row 0
};

struct SearchOptions {
  Metric metric = Metric::euclidean;
  SelectMethod select = SelectMethod::automatic;
  std::int64_t scratch_bytes = std::int64_t{64} << 20;  // distance block budget
  // CUDA: device memory for query blocks (queries, lists, distance tiles) and, as much
  // again, for cached training chunks; 0 = from the free device memory (30% for blocks,
  // at most 8 GiB; 50% for the cache). Tests set it small to force many blocks and
  // streamed chunks.
  std::int64_t device_scratch_bytes = 0;
  // CUDA, --select fast: bytes of one inner-product slab; 0 = 512 MiB for k <= 32 and
  // 2 GiB above (at most a quarter of the work budget). Benchmarks sweep it.
  std::int64_t fast_slab_bytes = 0;
  // CUDA, --select fast: query rows of one slab; 0 = 16384 for k <= 32, eight waves of
  // the block kernel above. Benchmarks sweep it.
  int fast_slab_rows = 0;
  // CUDA, --select tensor: the smallest k whose rows are first bounded over the whole
  // chunk, and the training rows that bound is sampled from; 0 = the search's own
  // (src/knn/cuda_search.cu). Benchmarks sweep them.
  int tensor_chunk_bound_from_k = 0;
  int tensor_chunk_samples = 0;
  // CUDA, --select tensor: the most bands its scan path takes (kernels/knn/tensor_scan.cu);
  // 0 = the kernel's own, -1 = never (tests compare it with the slabs).
  int tensor_scan_max_dims = 0;
};

class KnnSearch {
 public:
  virtual ~KnnSearch() = default;
  virtual std::string_view backend_name() const = 0;  // "cpu" or "cuda"
  // The method in use; for automatic, what the backend chose (automatic before the first search).
  virtual SelectMethod select_method() const = 0;
  // queries: [nq, chunk.dims] row-major; running: nq lists of running.k() pairs.
  virtual Status search(const float* queries, std::int64_t nq, const TrainingChunk& chunk, TopK& running) = 0;
  // The same queries against `steps` chunks that arrive one at a time (the ring's
  // shards): chunk_at(step) returns chunk `step` once it is in hand. The CUDA backend
  // keeps the running lists on the device from the first chunk to the last (copying
  // them out and back at every shard cost more than the search at four ranks a host).
  using ChunkAt = std::function<Result<TrainingChunk>(int step)>;
  virtual Status search_sequence(const float* queries, std::int64_t nq, int steps, const ChunkAt& chunk_at,
                                 TopK& running) {
    for (int step = 0; step < steps; ++step) {
      auto chunk = chunk_at(step);
      if (!chunk) return chunk.error();
      HB_TRY(search(queries, nq, *chunk, running));
    }
    return {};
  }
  // Votes where the lists are when no output wants the lists themselves (no --neighbors):
  // after the last chunk each query's list is voted on the search's device and only the
  // votes come home, the lists neither emptied on the host nor copied there (at k = 1024
  // a million queries' lists are 12 GB each way). prepare_votes says whether this search
  // can (uploading the training labels once); search_sequence_and_vote then returns true
  // with votes[q] for q < nq, or false with the lists in `running` for the caller to vote
  // (the CPU, or GPU lists that went home because the block did not fit).
  virtual bool prepare_votes(const VoteRule& rule) {
    (void)rule;
    return false;
  }
  virtual Result<bool> search_sequence_and_vote(const float* queries, std::int64_t nq, int steps,
                                                const ChunkAt& chunk_at, TopK& running,
                                                std::vector<VoteResult>& votes) {
    (void)votes;
    HB_TRY(search_sequence(queries, nq, steps, chunk_at, running));
    return false;
  }
  // Host buffers (slot 0 or 1) of at least `floats` floats to pack queries into before
  // searching them against several chunks (the ring's shards), one being filled while
  // the other is searched (QueryTiles): the CUDA backend pins them and uploads a
  // buffer's queries once, until that slot is asked for again. Valid until then.
  virtual float* query_buffer(std::int64_t floats, int slot = 0) {
    auto& buffer = query_buffers_[slot & 1];
    if (static_cast<std::int64_t>(buffer.size()) < floats) buffer.resize(static_cast<std::size_t>(floats));
    return buffer.data();
  }

  // Memory for the running lists (TopK): pinned on a GPU, so that they cross at the
  // copy engines' full rate (pageable lists took 0.6 s to come home and as long to go
  // up for the vote at 40 GB of scene) and the fast path sends each slab's lists home
  // while later slabs are searched.
  virtual std::pmr::memory_resource* list_memory() const { return std::pmr::get_default_resource(); }
  // True when a search makes empty lists itself (the GPU, on the device) and writes
  // every pair back: the caller may then leave their memory unwritten (TopK::resize).
  virtual bool makes_empty_lists() const { return false; }

  // Raw query tiles (QueryTiles' path for the types this says yes to): a backend that
  // gathers queries itself takes the tile as read and the list of its valid pixels. The
  // CUDA search does for u8/i16/u16 and f32: it uploads the tile as stored (half the
  // bytes of FP32 for int16) and lists, gathers, widens and shifts on the GPU: packing
  // FP32 on the host wrote 72 GB at 40 GB of int16 scene, and the host's memory
  // bandwidth bounded the classification.
  virtual bool gathers(DataType) const { return false; }
  // Memory for the tiles handed to gather() (pinned on a GPU).
  virtual HostAllocator tile_allocator() const { return {}; }
  // Pixels `pixel` (tile-local) of `tile` as FP32 queries [pixel.size(), bands.size()]
  // for search(), in slot 0 or 1: feature f = float(double(float(v)) - shift[f]), v the
  // pixel's sample in scene band bands[f] (gather_queries' bits; an empty shift leaves
  // float(v)). Host memory here, the backend's device copy on a GPU. The tile may be
  // reused once it returns; the queries stay until the slot is filled again. May run on
  // another thread than search() while the other slot is searched.
  virtual Result<const float*> gather(int slot, const io::Tile& tile, std::span<const std::int64_t> pixel,
                                      std::span<const std::int64_t> bands, std::span<const double> shift);
  // `floats` floats of queries gather() returned, copied to host memory (dedup probes).
  virtual Status copy_queries(const float* queries, std::int64_t floats, float* out);
  // Whether queries gather() returned are in the GPU's memory (its own copy, not the
  // host fallback), where a dedup probe can look at them in place.
  virtual bool queries_on_device(const float* queries) const { (void)queries; return false; }
  // gather() of the tile's valid pixels, listed here too: `pixel` gets valid_pixels'
  // list (ascending, tile-local). The base class lists them on the host; the CUDA
  // search flags and lists them on the GPU from the tile it uploads anyway (the host's
  // listing read the whole tile again: 4.5 s of a 40 GB int16 scene on 16 cores).
  virtual Result<const float*> list_and_gather(int slot, const io::Tile& tile, const classify::BandSelection& selection,
                                               std::optional<double> ignore_value, std::span<const double> shift,
                                               std::vector<std::int64_t>& pixel);

 private:
  std::vector<float> query_buffers_[2];
  std::vector<std::uint8_t> valid_;  // list_and_gather's flags on the host
};

std::unique_ptr<KnnSearch> make_cpu_knn_search(const SearchOptions& options);

// cpu: always. cuda: needs a CUDA build and a visible GPU (else a usage or resource
// error). automatic: cuda when both hold, else cpu.
Result<std::unique_ptr<KnnSearch>> make_knn_search(BackendKind kind, const SearchOptions& options);

}  // namespace hb::knn
