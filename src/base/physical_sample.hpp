// One stored sample in physical units: gain x stored + offset in FP64, rounded once to
// float32. Written once for the host's physical view (io/units.cpp) and the device's
// widening (kernels/convert.cu): the device spells out both FP64 roundings (_rn, never
// a fused multiply-add), as the host computes them, so both give the same bits.
#pragma once

#include "src/base/host_device.hpp"

namespace hb {

HB_HOST_DEVICE inline float physical_sample(double stored, double gain, double offset) {
#if defined(__CUDA_ARCH__)
  return static_cast<float>(__dadd_rn(__dmul_rn(gain, stored), offset));
#else
  return static_cast<float>(gain * stored + offset);
#endif
}

}  // namespace hb
