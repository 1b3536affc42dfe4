#include "src/knn/rank_draw.hpp"

#include <algorithm>
#include <utility>

#include "mpi/decomposition.hpp"
#include "src/classify/class_raster.hpp"
#include "src/classify/sampling.hpp"
#include "src/classify/scene_pass.hpp"

namespace hb::knn {
namespace {

Result<std::vector<std::uint8_t>> shared_validity(const io::Cube& cube, const classify::BandSelection& selection,
                                                  std::int64_t tile_rows, const mpi::Comm& comm) {
  return gathered(classify::validity_mask(cube, selection, tile_rows, mpi::even_rows(cube.info().shape.lines, comm)),
                  comm);
}

// The flags of the asked pixels (ascending): each rank checks those in its even share.
Result<std::vector<std::uint8_t>> shared_pixel_validity(const io::Cube& cube, const classify::BandSelection& selection,
                                                        std::span<const std::int64_t> pixels, std::int64_t tile_rows,
                                                        const mpi::Comm& comm) {
  const auto rows = mpi::even_rows(cube.info().shape.lines, comm);
  const auto samples = cube.info().shape.samples;
  const auto begin = std::lower_bound(pixels.begin(), pixels.end(), rows.begin * samples);
  const auto end = std::lower_bound(begin, pixels.end(), rows.end * samples);
  return gathered(classify::pixel_validity(cube, selection, {begin, end}, tile_rows), comm);
}

Result<std::vector<std::uint16_t>> read_rows(const std::string& path, const io::CubeShape& shape, RowRange rows,
                                             io::Metadata* meta) {
  auto cube = io::open_cube(path);
  if (!cube) return cube.error();
  if (meta) *meta = (*cube)->info().meta;
  return classify::read_class_raster(**cube, shape, rows);
}

// A candidate with its class, as it crosses between ranks.
struct ClassCandidate {
  std::uint64_t rank;
  std::int64_t pixel;
  std::int64_t id;
};

// Every rank's lists merged: the whole raster's lists (smallest_candidates' contract).
classify::CandidateLists merged(const classify::CandidateLists& mine, std::span<const std::int64_t> limit,
                                const mpi::Comm& comm) {
  std::vector<ClassCandidate> flat;
  for (std::size_t c = 0; c < mine.size(); ++c)
    for (const auto& [rank, pixel] : mine[c]) flat.push_back({rank, pixel, static_cast<std::int64_t>(c)});
  const auto bytes = comm.allgather_bytes(std::as_bytes(std::span<const ClassCandidate>(flat)));
  std::vector<ClassCandidate> all(bytes.size() / sizeof(ClassCandidate));
  std::memcpy(all.data(), bytes.data(), bytes.size());
  classify::CandidateLists lists(limit.size());
  for (const auto& c : all) lists[static_cast<std::size_t>(c.id)].push_back({c.rank, c.pixel});
  for (std::size_t c = 0; c < lists.size(); ++c) classify::keep_smallest(lists[c], limit[c]);
  return lists;
}

// The class of each pixel (ascending), from the lists that drew them.
std::vector<std::uint16_t> labels_of(std::span<const std::int64_t> pixels, const classify::CandidateLists& lists) {
  std::vector<std::pair<std::int64_t, std::uint16_t>> by_pixel;
  for (std::size_t c = 0; c < lists.size(); ++c)
    for (const auto& candidate : lists[c]) by_pixel.push_back({candidate.second, static_cast<std::uint16_t>(c)});
  std::sort(by_pixel.begin(), by_pixel.end());
  std::vector<std::uint16_t> labels;
  labels.reserve(pixels.size());
  for (const auto p : pixels)
    labels.push_back(std::lower_bound(by_pixel.begin(), by_pixel.end(), std::pair{p, std::uint16_t{0}})->second);
  return labels;
}

}  // namespace

Result<TruthRows> read_truth_share(const KnnJob& job, const io::CubeShape& shape, const mpi::Comm& comm) {
  TruthRows truth;
  if (job.truth.empty()) return truth;
  truth.rows = job.split.fraction ? RowRange{0, shape.lines} : mpi::even_rows(shape.lines, comm);
  auto ids = read_rows(job.truth, shape, truth.rows, &truth.meta);
  HB_TRY(mpi::agree(ids ? Status{} : Status{ids.error()}, comm));
  truth.ids = std::move(*ids);
  const auto tops = comm.allgather(truth.ids.empty() ? 0 : *std::max_element(truth.ids.begin(), truth.ids.end()));
  truth.top_class = static_cast<int>(*std::max_element(tops.begin(), tops.end()));
  return truth;
}

Status hold_truth_rows(TruthRows& truth, RowRange rows, const std::string& path, const io::CubeShape& shape,
                       const mpi::Comm& comm) {
  // The rows held already are kept; only the rest of the block is read (its ends: a
  // balanced block is its even share moved by a few rows).
  const auto samples = static_cast<std::size_t>(shape.samples);
  const RowRange kept{std::clamp(truth.rows.begin, rows.begin, rows.end),
                          std::clamp(truth.rows.end, rows.begin, rows.end)};
  const bool overlap = kept.begin < kept.end;
  const RowRange before{rows.begin, overlap ? kept.begin : rows.end};
  const RowRange after{overlap ? kept.end : rows.end, rows.end};
  const bool read = truth.top_class >= 0 && (before.rows() > 0 || after.rows() > 0);
  Result<std::vector<std::uint16_t>> head = std::vector<std::uint16_t>{}, tail = std::vector<std::uint16_t>{};
  if (read && before.rows() > 0) head = read_rows(path, shape, before, nullptr);
  if (read && head && after.rows() > 0) tail = read_rows(path, shape, after, nullptr);
  const Status status = !head ? Status{head.error()} : !tail ? Status{tail.error()} : Status{};
  HB_TRY(mpi::agree(status, comm));
  if (!read) return {};
  std::vector<std::uint16_t> ids = std::move(*head);
  if (overlap) {
    const auto from = truth.ids.begin() + static_cast<std::ptrdiff_t>((kept.begin - truth.rows.begin) * samples);
    ids.insert(ids.end(), from, from + static_cast<std::ptrdiff_t>(kept.rows() * samples));
  }
  ids.insert(ids.end(), tail->begin(), tail->end());
  truth.ids = std::move(ids);
  truth.rows = rows;
  return {};
}

Result<DrawnTraining> draw_training(const KnnJob& job, const io::Cube& scene, const classify::BandSelection& selection,
                                    std::int64_t tile_rows, const TruthRows& truth, const mpi::Comm& comm) {
  const classify::PixelCheck check = [&](std::span<const std::int64_t> pixels) {
    return shared_pixel_validity(scene, selection, pixels, tile_rows, comm);
  };
  DrawnTraining drawn;
  if (job.split.per_class) {
    classify::CandidateLists last;  // the lists of the final round: the drawn pixels' classes
    const std::int64_t first_pixel = truth.rows.begin * scene.info().shape.samples;
    const classify::CandidateSearch smallest =
        [&](std::span<const std::int64_t> limit) -> Result<classify::CandidateLists> {
      last = merged(classify::smallest_candidates(truth.ids, first_pixel, job.split.seed, limit), limit, comm);
      return last;
    };
    auto train =
        classify::draw_per_class(smallest, static_cast<std::uint16_t>(std::max(truth.top_class, 0)), job.split, check);
    if (!train) return train.error();
    drawn.labels = labels_of(*train, last);
    drawn.pixels = std::move(*train);
    return drawn;
  }
  auto train = classify::training_pixels(truth.ids, job.split, check, [&]() -> Result<std::vector<std::uint8_t>> {
    auto mask = shared_validity(scene, selection, tile_rows, comm);
    if (mask) drawn.valid = *mask;
    return mask;
  });
  if (!train) return train.error();
  for (const auto p : *train) drawn.labels.push_back(truth.ids[static_cast<std::size_t>(p)]);  // the whole raster
  drawn.pixels = std::move(*train);
  return drawn;
}

}  // namespace hb::knn
