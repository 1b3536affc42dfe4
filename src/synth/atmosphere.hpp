// Residual atmospheric transmittance in the scene's reflectance: surface reflectance is
// seen through it, so the deep water-vapour bands (~1.4 and ~1.9 um) and the 2.5 um
// edge carry almost no signal and noise dominates them, as in real AVIRIS products.
#pragma once

namespace hb::synth {

// Two-way transmittance in [0, 1] at a wavelength, smooth at the ~1 nm scale.
double atmospheric_transmittance(double wavelength_nm);

}  // namespace hb::synth
