// The noise estimators of MNF, each written once for the CPU pass (src/mnf/cpu_noise.cpp)
// and the GPU kernel (kernels/mnf/moments.cu, compiled per estimator): the pixels its
// residual reads around the pixel that owns it (`tap(i)` for i < kTaps, offsets in rows
// and columns; functions rather than arrays so that device code can read them),
// and the residual of one band from the values at those taps. From the taps follow the
// halo rows a tile must carry and the columns that own residuals; a residual counts when
// every tapped pixel is valid and inside the noise window.
//
// Adding an estimator: a struct below and its name in `NoiseEstimators` (the one
// registration line). The command line, job files and statistics files read the list
// (src/mnf/noise_estimators.hpp).
#pragma once

#include <cstddef>
#include <type_traits>

#include "kernels/mnf/median9.hpp"

namespace hb::kernels::mnf {

struct Tap {
  int row = 0;
  int col = 0;
};

// x(r, c) - x(r+1, c+1); Var(a - b) = 2σ², so the covariance is halved.
struct DiffNoise {
  static constexpr const char* name = "diff";
  static constexpr const char* description =
      "x(r,c) - x(r+1,c+1), covariance halved (SPy's noise_from_diffs('lowerright'))";
  static constexpr double covariance_scale = 0.5;
  static constexpr int kTaps = 2;
  HB_HOST_DEVICE static constexpr Tap tap(int i) { return i == 0 ? Tap{0, 0} : Tap{1, 1}; }
  template <class Value>
  HB_HOST_DEVICE static double residual(const Value& v) {
    return v(0) - v(1);
  }
};

// The 3x3 window in row-major order; tap 4 is the centre.
struct Window3x3 {
  static constexpr int kTaps = 9;
  HB_HOST_DEVICE static constexpr Tap tap(int i) { return {i / 3 - 1, i % 3 - 1}; }
};

// x - mean of its 8 neighbours; Var = (1 + 1/8)σ² for white noise, so x 8/9.
struct Mean3x3Noise : Window3x3 {
  static constexpr const char* name = "mean3x3";
  static constexpr const char* description =
      "x - mean of its 8 neighbours, covariance x 8/9 (white noise then gives the noise covariance)";
  static constexpr double covariance_scale = 8.0 / 9.0;
  template <class Value>
  HB_HOST_DEVICE static double residual(const Value& v) {
    double mean = 0.0;  // summed in tap order on both halves: the same bits
    for (int i = 0; i < 9; ++i) mean += i == 4 ? 0.0 : v(i);
    return v(4) - mean / 8.0;
  }
};

// x - per-band median of its 3x3 window (no closed-form factor).
struct Median3x3Noise : Window3x3 {
  static constexpr const char* name = "median3x3";
  static constexpr const char* description =
      "x - per-band median of its 3x3 window, covariance unscaled (no closed-form factor; it underestimates white "
      "noise)";
  static constexpr double covariance_scale = 1.0;
  template <class Value>
  HB_HOST_DEVICE static double residual(const Value& v) {
    return v(4) - median9(v(0), v(1), v(2), v(3), v(4), v(5), v(6), v(7), v(8));
  }
};

template <class... Estimators>
struct EstimatorList {
  static constexpr int size = sizeof...(Estimators);
};

// The registration line: every estimator, in the order help texts list them. The first
// is the default.
using NoiseEstimators = EstimatorList<DiffNoise, Mean3x3Noise, Median3x3Noise>;

// An estimator's place in NoiseEstimators: what options and runs carry.
enum class NoiseEstimator : int {};

namespace detail {
template <class E, class First, class... Rest>
constexpr int index_in(EstimatorList<First, Rest...>) {
  if constexpr (std::is_same_v<E, First>) {
    return 0;
  } else {
    static_assert(sizeof...(Rest) > 0, "estimator not registered in NoiseEstimators");
    return 1 + index_in<E>(EstimatorList<Rest...>{});
  }
}
}  // namespace detail

template <class E>
constexpr NoiseEstimator estimator_id() {
  return NoiseEstimator{detail::index_in<E>(NoiseEstimators{})};
}

// How far an estimator's taps reach from the owning pixel.
struct Reach {
  int above = 0, below = 0, left = 0, right = 0;
};

template <class E>
constexpr Reach reach_of() {
  Reach r;
  for (int i = 0; i < E::kTaps; ++i) {
    const Tap t = E::tap(i);
    r.above = t.row < -r.above ? -t.row : r.above;
    r.below = t.row > r.below ? t.row : r.below;
    r.left = t.col < -r.left ? -t.col : r.left;
    r.right = t.col > r.right ? t.col : r.right;
  }
  return r;
}

namespace detail {
template <int I, class F, class E, class... Rest>
constexpr decltype(auto) visit_at(int id, F&& f, EstimatorList<E, Rest...>) {
  if constexpr (sizeof...(Rest) == 0) {
    return f(E{});
  } else {
    if (id == I) return f(E{});
    return visit_at<I + 1>(id, static_cast<F&&>(f), EstimatorList<Rest...>{});
  }
}
}  // namespace detail

// f(E{}) for the estimator at `id` (the last one for an id out of range).
template <class F>
constexpr decltype(auto) visit_estimator(NoiseEstimator id, F&& f) {
  return detail::visit_at<0>(static_cast<int>(id), static_cast<F&&>(f), NoiseEstimators{});
}

// f(E{}, id) for every registered estimator, in order.
template <class F>
constexpr void for_each_estimator(F&& f) {
  [&]<class... E>(EstimatorList<E...>) {
    int id = 0;
    (f(E{}, NoiseEstimator{id++}), ...);
  }(NoiseEstimators{});
}

}  // namespace hb::kernels::mnf
