#include "src/synth/atmosphere.hpp"

#include <array>
#include <cmath>

namespace hb::synth {
namespace {

// An absorption feature in optical depth: depth * exp(-|x|^power / 2), x = (nm - centre) / width.
// Power 2 is a Gaussian line; power 4 the flat-bottomed shape of a saturated band.
struct Absorber {
  double centre_nm;
  double width_nm;
  double depth;
  double power;
};

constexpr std::array<Absorber, 11> kAbsorbers{{
    {687.0, 3.0, 0.15, 2.0},   // O2 B band
    {719.0, 8.0, 0.12, 2.0},   // H2O
    {762.0, 4.0, 0.80, 2.0},   // O2 A band (narrow; band averaging softens it)
    {820.0, 12.0, 0.08, 2.0},  // H2O
    {940.0, 22.0, 0.35, 2.0},  // H2O (mostly corrected)
    {1135.0, 28.0, 0.45, 2.0}, // H2O (mostly corrected)
    {1395.0, 55.0, 6.00, 4.0}, // H2O: saturated 1350-1450 nm
    {1875.0, 85.0, 6.00, 4.0}, // H2O: saturated 1800-1950 nm
    {2010.0, 10.0, 0.25, 2.0}, // CO2
    {2060.0, 10.0, 0.25, 2.0}, // CO2
    {1268.0, 5.0, 0.10, 2.0},  // O2
}};

double optical_depth(const Absorber& a, double nm) {
  const double x = std::abs(nm - a.centre_nm) / a.width_nm;
  return a.depth * std::exp(-0.5 * std::pow(x, a.power));
}

}  // namespace

double atmospheric_transmittance(double wavelength_nm) {
  double tau = 0.0;
  for (const auto& a : kAbsorbers) tau += optical_depth(a, wavelength_nm);
  // The wing of the 2.7 um water band: absorption grows steeply beyond ~2400 nm.
  tau += 4.0 * std::exp((wavelength_nm - 2500.0) / 30.0);
  return std::exp(-tau);
}

}  // namespace hb::synth
