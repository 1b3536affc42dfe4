// What the classifier compares: a pixel's feature vector. `bands` = the scene's bands
// minus the bad bands (bbl); `mnf:N` = the first N MNF components (provided by the MNF
// module, src/mnf). A pixel is ignored (class 0 in every output) when any used band is
// non-finite or equals the scene's data ignore value, the same rule as the MNF statistics.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/metadata.hpp"
#include "io/tile.hpp"
#include "src/base/error.hpp"

namespace hb::classify {

struct FeatureSpec {
  enum class Kind { bands, mnf };
  Kind kind = Kind::bands;
  int components = 0;  // mnf only
};

Result<FeatureSpec> parse_feature_spec(const std::string& text);  // "bands" | "mnf:N"
std::string feature_spec_name(const FeatureSpec& spec);

// The scene bands used as features, and their wavelengths (empty when unknown).
struct BandSelection {
  std::vector<std::int64_t> bands;
  std::vector<double> wavelength;
  std::string wavelength_units;
  std::int64_t scene_bands = 0;
  std::int64_t dims() const { return static_cast<std::int64_t>(bands.size()); }
};

BandSelection select_good_bands(const io::CubeInfo& info);

// From `pixels` x scene_bands float32 samples to features [pixels, dims] and a
// validity flag per pixel (1 = usable). Ignored pixels get zero features so that
// nothing downstream sees NaN.
void extract_features(const float* samples, std::int64_t pixels, const BandSelection& selection,
                      std::optional<double> ignore_value, float* features, std::uint8_t* valid);
// The same for pixels [first, first + count) of a tile in the scene's own data type:
// each sample is widened to float as it is taken, with no intermediate float tile.
void extract_features(const io::Tile& tile, std::int64_t first, std::int64_t count, const BandSelection& selection,
                      std::optional<double> ignore_value, float* features, std::uint8_t* valid);
// Only the validity flags of every pixel of a tile (nothing to do for integer data
// without an ignore value).
void extract_validity(const io::Tile& tile, const BandSelection& selection, std::optional<double> ignore_value,
                      std::uint8_t* valid);

// A tile's valid pixels packed as query rows, [count, dims], in one pass over the raw
// samples (no float tile in between: the host's memory traffic bounds a classification
// run by four ranks a host): each feature widened to float, then minus shift[f] in
// double, rounded once (the bits of extract_features + pack_valid_pixels; an empty shift
// leaves them as they are). `valid` gets every pixel's flag, `pixel` each query's
// tile-local pixel. Returns the count.
std::int64_t pack_valid_queries(const io::Tile& tile, const BandSelection& selection,
                                std::optional<double> ignore_value, std::span<const double> shift, float* queries,
                                std::vector<std::uint8_t>& valid, std::vector<std::int64_t>& pixel);

// The narrow sample types (u8, i16, u16), whose raw tiles cross to a GPU and are
// gathered and widened there (KnnSearch::gather, as are f32 tiles): half the bytes of
// FP32 or fewer.
bool is_narrow(DataType type);
// For a narrow type: the sample value that rules a pixel out (the ignore value, when it
// is one of the type's values); none when no sample can, and every pixel is valid.
std::optional<std::int64_t> narrow_ignore_target(DataType type, std::optional<double> ignore_value);
// For float samples: the ignore value as a float, with which they compare (NaN when
// there is none, equal to no sample); a pixel is out when a used band equals it or is
// not finite.
float float_ignore_value(std::optional<double> ignore_value);
// pack_valid_queries without the packing: every pixel's flag in `valid` and the valid
// ones, tile-local, in `pixel` (the order of the packed rows). Returns the count.
std::int64_t valid_pixels(const io::Tile& tile, const BandSelection& selection, std::optional<double> ignore_value,
                          std::vector<std::uint8_t>& valid, std::vector<std::int64_t>& pixel);
// The rest on the host: queries[q, f] = the sample of pixel[q] in scene band bands[f],
// widened to float (in physical units when the tile carries io::StoredUnits), then
// minus shift[f] in double, rounded once (pack_valid_queries'
// bits; an empty shift leaves the float).
void gather_queries(const io::Tile& tile, std::span<const std::int64_t> pixel, std::span<const std::int64_t> bands,
                    std::span<const double> shift, float* queries);

}  // namespace hb::classify
