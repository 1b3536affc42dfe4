// Exact duplicate spectra in a tile's feature rows: classify each distinct spectrum once,
// scatter its result to every copy. A 64-bit fingerprint of a row's bytes maps to the
// row that first carried it (hash table: GPU hopscotch on the CUDA backend, the CPU table
// otherwise); rows with equal fingerprints are compared in full, so a fingerprint
// collision never merges different spectra. See src/dedup/README.md.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "src/base/error.hpp"
#include "src/backend/backend.hpp"

namespace hb::dedup {

enum class Mode { automatic, on, off };
std::optional<Mode> mode_from_name(std::string_view name);  // auto|on|off
std::string_view mode_name(Mode m);

struct Duplicates {
  std::vector<std::int64_t> unique_rows;  // the first row of each distinct spectrum, ascending
  std::vector<std::int64_t> inverse;      // per row: index into unique_rows of its spectrum
  // Rows found all distinct and not listed (find_duplicates_on_device): the lists above
  // are then empty, every row its own spectrum.
  std::int64_t unlisted_distinct = 0;

  std::int64_t rows() const { return unlisted_distinct + static_cast<std::int64_t>(inverse.size()); }
  std::int64_t uniques() const { return unlisted_distinct + static_cast<std::int64_t>(unique_rows.size()); }
  double duplicate_share() const { return rows() == 0 ? 0.0 : 1.0 - double(uniques()) / double(rows()); }
};

// rows: [n, dims] float32, row-major. backend cuda needs a device (else an error);
// automatic picks cuda when there is one.
Result<Duplicates> find_duplicates(std::span<const float> rows, std::int64_t dims,
                                   BackendKind backend = BackendKind::cpu);
// The same on the GPU for rows already in its memory ([n, dims] float32 on the current
// device, complete before the call), without copying them home: a 40 GB scene's probe
// tiles are 100 MB each. `host_rows` gives the rows in host memory only when two
// different spectra share a fingerprint (the host resolves those). When every row is
// distinct the lists are not made (Duplicates::unlisted_distinct): a probe of a tile
// without copies, the common case, then does nothing per row on the host. CUDA builds
// only.
Result<Duplicates> find_duplicates_on_device(const float* device_rows, std::int64_t n, std::int64_t dims,
                                             const std::function<Result<std::span<const float>>()>& host_rows);

// Keeps the unique rows, in order, at the front of `rows` and shrinks it to them.
void keep_unique_rows(std::vector<float>& rows, std::int64_t dims, const Duplicates& d);

// --dedup auto: whether to deduplicate the next tile. The first tile is a probe; dedup
// stays on while the duplicate share of the tiles seen with it is at least
// kWorthShare. Once off it is probed again kReprobeTiles tiles later (no-data borders
// often begin part-way down a flightline), and each probe that finds nothing doubles
// the wait: on a scene without duplicates a probe can cost several tiles' search.
class AutoRule {
 public:
  static constexpr double kWorthShare = 0.01;
  static constexpr int kReprobeTiles = 16;

  explicit AutoRule(Mode mode) : mode_(mode) {}
  bool use_for_next_tile();
  void observe(const Duplicates& d);  // after a deduplicated tile

 private:
  Mode mode_;
  bool on_ = true;
  std::int64_t tiles_since_probe_ = 0;
  std::int64_t wait_ = kReprobeTiles;  // tiles between probes while off
};

}  // namespace hb::dedup
