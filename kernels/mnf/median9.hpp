// Median of nine values by a fixed compare-exchange network (Paeth/Devillard, 19
// exchanges): no data-dependent branches or indexing, so on the device the nine values
// stay in registers (a sort with run-time indices would spill to local memory).
// Usable from host code too, which is how CI tests it without a GPU.
#pragma once

#include "src/base/host_device.hpp"

namespace hb::kernels::mnf {

template <class T>
HB_HOST_DEVICE inline void order_pair(T& a, T& b) {
  const T lo = b < a ? b : a;
  const T hi = b < a ? a : b;
  a = lo;
  b = hi;
}

// p[4] of the result is the median; the other elements are left partially ordered.
template <class T>
HB_HOST_DEVICE inline T median9(T p0, T p1, T p2, T p3, T p4, T p5, T p6, T p7, T p8) {
  order_pair(p1, p2); order_pair(p4, p5); order_pair(p7, p8);
  order_pair(p0, p1); order_pair(p3, p4); order_pair(p6, p7);
  order_pair(p1, p2); order_pair(p4, p5); order_pair(p7, p8);
  order_pair(p0, p3); order_pair(p5, p8); order_pair(p4, p7);
  order_pair(p3, p6); order_pair(p1, p4); order_pair(p2, p5);
  order_pair(p4, p7); order_pair(p4, p2); order_pair(p6, p4);
  order_pair(p4, p2);
  return p4;
}

}  // namespace hb::kernels::mnf
