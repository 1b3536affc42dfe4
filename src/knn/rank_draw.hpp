// The training draw of `hyperbatch knn` across ranks, each rank working on its own rows:
// it reads its even share of the truth raster, scans that share for the draw's
// candidates and checks the validity of the drawn pixels there; the small lists are
// allgathered, so every rank draws the same pixels as one rank alone would. (Each rank
// read and scanned the whole raster before: 0.6 s of a 40 GB scene's run, repeated.)
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "io/cube.hpp"
#include "mpi/agree.hpp"
#include "mpi/comm.hpp"
#include "src/base/error.hpp"
#include "src/classify/features.hpp"
#include "src/knn/run.hpp"

namespace hb::knn {

// Every rank's values, concatenated in rank order, once all have them (or the first
// rank's failure on every rank).
template <class T>
Result<std::vector<T>> gathered(const Result<std::vector<T>>& mine, const mpi::Comm& comm) {
  HB_TRY(mpi::agree(mine ? Status{} : Status{mine.error()}, comm));
  const auto all = comm.allgather_bytes(std::as_bytes(std::span<const T>(*mine)));
  std::vector<T> values(all.size() / sizeof(T));
  std::memcpy(values.data(), all.data(), all.size());
  return values;
}

// The rows of the truth raster a rank holds.
struct TruthRows {
  std::vector<std::uint16_t> ids;  // class ids of rows [rows.begin, rows.end)
  RowRange rows;
  int top_class = -1;  // the largest id of the whole raster; -1: no truth
  io::Metadata meta;
};

// The job's truth (collective; none without --truth): the rank's even share for a count
// per class or a training file, the whole raster for a fraction (its counts need every
// class member).
Result<TruthRows> read_truth_share(const KnnJob& job, const io::CubeShape& shape, const mpi::Comm& comm);

// Makes `truth` hold at least rows `rows` (the rank's query block), reading those it
// lacks (collective).
Status hold_truth_rows(TruthRows& truth, RowRange rows, const std::string& path, const io::CubeShape& shape,
                       const mpi::Comm& comm);

struct DrawnTraining {
  std::vector<std::int64_t> pixels;   // ascending scene pixels
  std::vector<std::uint16_t> labels;  // their classes
  std::vector<std::uint8_t> valid;    // the whole validity mask, when a fraction's draw needed it
};

// The split of job.split, the same on every rank (collective).
Result<DrawnTraining> draw_training(const KnnJob& job, const io::Cube& scene, const classify::BandSelection& selection,
                                    std::int64_t tile_rows, const TruthRows& truth, const mpi::Comm& comm);

}  // namespace hb::knn
