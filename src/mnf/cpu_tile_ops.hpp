// The CPU half of the MNF/PCA tile operations (see TileOps), and the reference the
// CUDA half is tested against. The free functions are the operations themselves.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "src/base/error.hpp"
#include "io/tile.hpp"
#include "src/mnf/linear_map.hpp"
#include "src/mnf/stats.hpp"
#include "src/mnf/tile_ops.hpp"

namespace hb::mnf {
// The operations on the host, with the CPU backend as their device.
std::unique_ptr<TileOps> make_cpu_tile_ops();
// The same with a given device (the fallback of make_tile_ops).
std::unique_ptr<TileOps> make_cpu_tile_ops(std::unique_ptr<Backend> device);
}  // namespace hb::mnf

namespace hb::mnf::cpu {

Status accumulate_moments(const io::Tile& tile, const mnf::PixelRules& rules, mnf::Moments& data);
Status accumulate_noise_moments(const io::Tile& tile, const mnf::PixelRules& rules, const mnf::NoiseConfig& config,
                                mnf::Moments& noise);
Status transform(const io::Tile& tile, const mnf::PixelRules& rules, const mnf::LinearMap& map,
                 std::span<float> out);

namespace detail {

// The used bands of a tile's held rows widened to float64, with each pixel's validity.
struct WideRows {
  std::int64_t samples = 0;
  std::int64_t bands = 0;  // used bands
  RowRange held;
  std::vector<double> values;       // [held pixels x used bands]
  std::vector<std::uint8_t> valid;  // [held pixels]

  std::int64_t index(std::int64_t row, std::int64_t col) const { return (row - held.begin) * samples + col; }
  const double* pixel(std::int64_t row, std::int64_t col) const {
    return values.data() + index(row, col) * bands;
  }
  bool is_valid(std::int64_t row, std::int64_t col) const { return valid[static_cast<std::size_t>(index(row, col))] != 0; }
};

Result<WideRows> widen(const io::Tile& tile, const mnf::PixelRules& rules, RowRange rows);

// Adds vectors to Moments in blocks through DSYRK (upper triangle, row-major).
class MomentAccumulator {
 public:
  explicit MomentAccumulator(mnf::Moments& moments);
  ~MomentAccumulator();
  MomentAccumulator(const MomentAccumulator&) = delete;
  MomentAccumulator& operator=(const MomentAccumulator&) = delete;
  // Returns the slot for the next vector (bands doubles), to be filled by the caller.
  double* next();
  void flush();

 private:
  mnf::Moments& moments_;
  std::int64_t bands_;
  std::int64_t rows_ = 0;
  std::vector<double> block_;
};

}  // namespace detail
}  // namespace hb::mnf::cpu
