// Surface materials of the synthetic scenes: smooth reflectance curves (0..1) with the
// diagnostic features a remote-sensing analyst expects (chlorophyll and the red edge,
// leaf water, clay Al-OH at 2.2 um, carbonate at 2.34 um, ferric iron near 0.9 um).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace hb::synth {

enum class BaseMaterial {
  green_vegetation,
  dry_soil,
  water,
  limestone,
  asphalt,
  iron_oxide_rock,
  concrete,
  dry_grass,
  kaolinite,
};

inline constexpr int kBaseMaterials = 9;

// A base material, optionally varied: mixed with another base, scaled in brightness and
// tilted in continuum slope. The variation makes classes beyond the base set distinct.
struct Material {
  std::string name;                    // no commas: ENVI lists are comma-separated
  std::array<std::uint8_t, 3> colour;  // class lookup r, g, b
  BaseMaterial base = BaseMaterial::green_vegetation;
  BaseMaterial admixture = BaseMaterial::green_vegetation;
  double admixture_fraction = 0.0;
  double brightness = 1.0;
  double slope = 0.0;  // relative reflectance change from 1400 nm to 2500 nm
};

// Reflectance of a base material at a wavelength, in [0, 1].
double base_reflectance(BaseMaterial base, double wavelength_nm);

// Reflectance of a (possibly varied) material, clamped to [0, 1].
double reflectance(const Material& material, double wavelength_nm);

// `classes` distinct materials: the base set in order, then seeded variants of it.
std::vector<Material> choose_materials(int classes, std::uint64_t seed);

}  // namespace hb::synth
