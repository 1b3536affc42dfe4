// Reference spectra before they meet a scene: read from an ENVI spectral library, from
// an HDF5 endmember file, or averaged per class from a training set (a truth raster
// over the scene, or a KNN training file).
//
// HDF5 endmember layout (this project's own; write it with `sam --save-library`):
//   /library/spectra          [n, channels] float32 or float64   one spectrum per row
//   /library/wavelengths      [channels] float                   optional band centres
//   /library/wavelength_units scalar string                      optional: Nanometers,
//                             Micrometers (default: guessed, < 100 means micrometres)
//   /library/names            [n] strings                        optional spectrum names
//   /library/bbl              [channels] integer                 optional, 1 good, 0 bad
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/cube.hpp"
#include "src/classify/features.hpp"
#include "src/classify/training.hpp"

namespace hb::sam {

struct SpectralLibrary {
  std::string source;               // file the spectra came from, for messages
  std::vector<std::string> names;   // one per spectrum
  std::vector<int> lookup;          // optional r, g, b per spectrum (from a truth raster)
  std::int64_t channels = 0;
  std::vector<double> spectra;      // [count, channels] row-major
  std::vector<double> wavelength;   // [channels] or empty
  std::string wavelength_units;     // as written; empty = unknown
  std::vector<std::uint8_t> gap;    // [channels] 1 = unusable channel (bbl 0, non-finite or deleted value)
  // Class means are already on the scene's feature bands: these scene bands, in order.
  std::vector<std::int64_t> scene_bands;

  std::int64_t count() const { return channels > 0 ? static_cast<std::int64_t>(spectra.size()) / channels : 0; }
};

// An ENVI Spectral Library (.sli + .hdr) or an HDF5 file with /library (layout above).
Result<SpectralLibrary> read_library(const std::string& path);

// Mean spectrum of every class present in `truth` (a class raster aligned with the
// scene; 0 = unlabelled), over the scene's good bands and valid pixels (src/classify/features.hpp).
// Spectrum i is class id i + 1; classes without a valid pixel are an error.
Result<SpectralLibrary> class_means_from_truth(const io::Cube& scene, const io::Cube& truth, std::int64_t tile_rows);

// Mean of every class of a KNN training file's rows; its features are the scene's good bands.
Result<SpectralLibrary> class_means_from_training(const classify::TrainingSet& training,
                                                  const classify::BandSelection& scene, const std::string& scene_path,
                                                  const std::string& train_path);

// Writes `library` in the HDF5 layout above, atomically.
Status write_library(const std::string& path, const SpectralLibrary& library);

}  // namespace hb::sam
