// Which rank processes which scene, and the fingerprints that make a step's checksum.
//
// Scheduling rule: scenes are sorted by size in bytes, largest first (ties by name).
// Job arrays deal them to shards ahead of time (every task computes the same answer):
// each goes to the shard with the least bytes so far (ties: lowest shard), greedy
// longest-processing-time first, within 4/3 of the best makespan. Within a run, ranks
// take a shard's scenes in that order as each becomes free (jobs/scene_queue.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hb::jobs {

struct Sized {
  std::string name;
  std::int64_t bytes = 0;
};

// Item indices by size, largest first (ties by name).
std::vector<std::size_t> largest_first(const std::vector<Sized>& items);
// owner[i] = the bin (rank or shard) of item i, for `bins` bins.
std::vector<int> deal_by_size(const std::vector<Sized>& items, int bins);

// 64-bit FNV-1a, as 16 hex digits: stable across runs, machines and rank counts.
class Fingerprint {
 public:
  Fingerprint& add(const std::string& text);
  Fingerprint& add(std::int64_t value);
  // A file by its content (absent files hash as absent): not its path, size or dates,
  // so a copy or a touch redoes nothing and the same inputs give the same checksums on
  // any run. The content hash is read once and remembered while the file's device,
  // inode, size and times stay the same (jobs/input_hashes.hpp), across runs too.
  Fingerprint& add_file(const std::string& path);
  std::string hex() const;

 private:
  std::uint64_t hash_ = 14695981039346656037ull;
};

// Bytes of a scene on disk: the header's data file for ENVI, the file for HDF5.
std::int64_t scene_bytes(const std::string& path);

}  // namespace hb::jobs
