#include "io/tile.hpp"

#include <algorithm>

namespace hb::io {

RowRange with_halo(RowRange core, std::int64_t halo_rows, std::int64_t lines) {
  return {std::max<std::int64_t>(0, core.begin - halo_rows),
          std::min<std::int64_t>(lines, core.end + halo_rows)};
}

Tile::Tile(DataType type, std::int64_t samples, std::int64_t bands, RowRange held, RowRange core)
    : type_(type), samples_(samples), bands_(bands), held_(held), core_(core),
      bytes_(static_cast<std::size_t>(held.rows() * samples * bands) * bytes_per_sample(type)) {}

}  // namespace hb::io
