// KNN's training set spread over MPI ranks: rank r holds global rows [first, first +
// count), prepared like the queries. Two ways to search every shard for a query tile:
//  * ring: shards travel round the ranks (MPI_Isend/Irecv to the next rank, from the
//    previous one); the transfer of the next shard overlaps the search of the one in
//    hand. No rank ever holds more than two shards besides its own.
//  * allgather: small training sets are copied whole to every rank once.
// Top-k lists order candidates by (distance, global index), so labels are the same bits
// for any rank count and mode.
#pragma once

#include <cstdint>

#include "src/knn/training_chunks.hpp"

namespace hb::knn {

// Measured on 2 CPU ranks (src/knn/README.md, "Across ranks"): with the training set in
// memory, allgather beats the ring by ~10% (the ring searches P smaller chunks per
// tile; its transfers were fully hidden), so the crossover is memory: allgather while
// the whole set fits `allgather_max_bytes` per rank (the job's training cache budget).
ShardMode choose_shard_mode(ShardMode requested, std::int64_t training_bytes, int ranks,
                            std::int64_t allgather_max_bytes);

}  // namespace hb::knn
