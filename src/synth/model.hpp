// Everything a synthetic scene is made of, built once per scene in O(samples * bands +
// cells) memory, and the pure functions that turn it into pixels for any row range.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "io/tile.hpp"
#include "src/synth/layout.hpp"
#include "src/synth/materials.hpp"
#include "src/synth/sensor.hpp"
#include "src/synth/synth.hpp"
#include "src/synth/wavelengths.hpp"

namespace hb::synth {

inline constexpr std::int16_t kFillValue = -9999;  // "data ignore value" of the scene
inline constexpr float kReflectanceScale = 10000.0f;

// Knobs for tests: realism on by default, each effect can be switched off alone.
struct SceneParams {
  double noise = 1.0;     // scale of the random noise
  double striping = 1.0;  // scale of the detector gain/offset errors
  LayoutParams layout;    // within-class variability and border mixing
};

struct SceneModel {
  SceneModel(const SynthOptions& options, const SceneParams& params = {});

  std::int64_t lines() const { return options.lines; }
  std::int64_t samples() const { return options.samples; }
  std::int64_t bands() const { return options.bands; }
  int classes() const { return options.classes; }

  SynthOptions options;
  SceneParams params;
  BandSet wavelengths;
  std::vector<double> transmittance;  // band-averaged atmospheric transmittance
  std::vector<Material> materials;
  std::vector<float> signal_dn;  // classes x bands: noise-free DN of each pure material
  std::vector<float> sigma_dn;   // bands: noise standard deviation
  Striping striping;
  Layout layout;
  std::uint64_t noise_key = 0;
};

// Fills rows [rows.begin, rows.end): `pixels_bip` (rows x samples x bands, int16
// reflectance x 10000, kFillValue outside the flightline) and `truth` (rows x samples,
// 0 = no data, else material index + 1). The bytes depend only on the model and the
// row numbers, never on how the scene is split into calls or `threads`.
void generate_rows(const SceneModel& model, RowRange rows, std::span<std::int16_t> pixels_bip,
                   std::span<std::uint8_t> truth, int threads = 1);

// The pure spectra the scene's noise-free pixels are made of (classes x bands): material
// reflectance seen through the residual atmosphere, in reflectance units (0..1).
std::vector<float> material_library(const SceneModel& model);

}  // namespace hb::synth
