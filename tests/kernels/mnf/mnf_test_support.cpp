#include "tests/kernels/mnf/mnf_test_support.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>

namespace hb::kernels::mnf::test {

bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

double Scene::at(std::int64_t row, std::int64_t col, std::int64_t band) const {
  const std::int64_t i = (row * samples + col) * bands + band;
  return visit_data_type(type, [&](auto zero) {
    using T = decltype(zero);
    T v;
    std::memcpy(&v, raw.data() + i * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
    return static_cast<double>(v);
  });
}

namespace {

void put(Scene& s, std::int64_t i, double value) {
  visit_data_type(s.type, [&](auto zero) {
    using T = decltype(zero);
    const T v = static_cast<T>(value);
    std::memcpy(s.raw.data() + i * static_cast<std::int64_t>(sizeof(T)), &v, sizeof(T));
  });
}

bool is_float(DataType t) { return t == DataType::f32 || t == DataType::f64; }

}  // namespace

Scene make_scene(DataType type, std::int64_t lines, std::int64_t samples, std::int64_t bands, int good_bands,
                 unsigned seed) {
  Scene s;
  s.type = type;
  s.lines = lines;
  s.samples = samples;
  s.bands = bands;
  s.ignore = -9999.0;
  s.raw.resize(static_cast<std::size_t>(lines * samples * bands) * bytes_per_sample(type));
  const std::int64_t bad = bands - good_bands;
  for (std::int64_t b = 0; b < bands; ++b)
    if (!(b % 2 == 1 && b / 2 < bad)) s.good.push_back(static_cast<int>(b));
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 40.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::int64_t r = 0; r < lines; ++r)
    for (std::int64_t c = 0; c < samples; ++c) {
      const double scene_signal = 300.0 * std::sin(0.3 * static_cast<double>(r)) * std::cos(0.2 * static_cast<double>(c));
      const std::int64_t base = (r * samples + c) * bands;
      for (std::int64_t b = 0; b < bands; ++b) {
        double v = 1000.0 + 5.0 * static_cast<double>(b) + scene_signal * (1.0 + 0.01 * static_cast<double>(b)) + noise(rng);
        v = is_float(type) ? v + 0.25 * unit(rng) : std::round(v);
        put(s, base + b, v);
      }
      const double u = unit(rng);
      const auto good_band = s.good[static_cast<std::size_t>(unit(rng) * s.nb()) % s.good.size()];
      if (u < 0.03)  // excluded: a fill value (or NaN) in one good band
        put(s, base + good_band, is_float(type) && u < 0.015 ? nan : *s.ignore);
      else if (u < 0.06 && bad > 0)  // not excluded: fill only in a bad band
        put(s, base + 1, is_float(type) && u < 0.045 ? nan : *s.ignore);
    }
  return s;
}

namespace {

std::int64_t held_begin(std::int64_t core_begin, int halo) { return std::max<std::int64_t>(0, core_begin - halo); }
std::int64_t held_end(const Scene& s, std::int64_t core_end, int halo) { return std::min(s.lines, core_end + halo); }

std::vector<std::byte> held_bytes(const Scene& s, std::int64_t core_begin, std::int64_t core_end, int halo) {
  const auto row_bytes = static_cast<std::ptrdiff_t>(s.samples * s.bands) *
                         static_cast<std::ptrdiff_t>(bytes_per_sample(s.type));
  return {s.raw.begin() + held_begin(core_begin, halo) * row_bytes,
          s.raw.begin() + held_end(s, core_end, halo) * row_bytes};
}

}  // namespace

DeviceTile::DeviceTile(const Scene& scene, std::int64_t core_begin, std::int64_t core_end, int halo)
    : bytes(held_bytes(scene, core_begin, core_end, halo)), good(scene.good) {
  const std::int64_t first = held_begin(core_begin, halo);
  const std::int64_t last = held_end(scene, core_end, halo);
  view.type = scene.type;
  view.data = bytes.get();
  view.samples = scene.samples;
  view.bands = scene.bands;
  view.lines = scene.lines;
  view.held_row0 = first;
  view.held_rows = last - first;
  view.core_row0 = core_begin;
  view.core_rows = core_end - core_begin;
  rules.good_bands = good.get();
  rules.nb = scene.nb();
  rules.has_ignore = scene.ignore.has_value();
  rules.ignore_value = scene.ignore.value_or(0.0);
}

bool ref_valid(const Scene& s, std::int64_t row, std::int64_t col) {
  for (int b : s.good) {
    const double x = s.at(row, col, b);
    if (!std::isfinite(x) || (s.ignore && x == *s.ignore)) return false;
  }
  return true;
}

std::vector<double> ref_centered(const Scene& s, std::int64_t r0, std::int64_t r1, const std::vector<double>& shift) {
  const auto nb = static_cast<std::size_t>(s.nb());
  std::vector<double> X(static_cast<std::size_t>((r1 - r0) * s.samples) * nb, 0.0);
  for (std::int64_t r = r0; r < r1; ++r)
    for (std::int64_t c = 0; c < s.samples; ++c) {
      if (!ref_valid(s, r, c)) continue;
      double* row = X.data() + static_cast<std::size_t>((r - r0) * s.samples + c) * nb;
      for (std::size_t k = 0; k < nb; ++k) row[k] = s.at(r, c, s.good[k]) - shift[k];
    }
  return X;
}

std::vector<double> ref_residuals(const Scene& s, NoiseEstimator e, std::int64_t r0, std::int64_t r1,
                                  const NoiseWindow& w, std::uint64_t& count) {
  const auto nb = static_cast<std::size_t>(s.nb());
  std::vector<double> R(static_cast<std::size_t>((r1 - r0) * s.samples) * nb, 0.0);
  count = 0;
  auto usable = [&](std::int64_t r, std::int64_t c) {
    return r >= w.row_begin && r < w.row_end && c >= w.col_begin && c < w.col_end && ref_valid(s, r, c);
  };
  const bool diff = e == estimator_id<DiffNoise>();
  for (std::int64_t r = r0; r < r1; ++r)
    for (std::int64_t c = 0; c < s.samples; ++c) {
      double* out = R.data() + static_cast<std::size_t>((r - r0) * s.samples + c) * nb;
      if (diff) {
        if (r + 1 >= s.lines || c + 1 >= s.samples || !usable(r, c) || !usable(r + 1, c + 1)) continue;
        for (std::size_t k = 0; k < nb; ++k) out[k] = s.at(r, c, s.good[k]) - s.at(r + 1, c + 1, s.good[k]);
        ++count;
        continue;
      }
      if (r < 1 || r + 1 >= s.lines || c < 1 || c + 1 >= s.samples) continue;
      bool ok = true;
      for (int dr = -1; dr <= 1; ++dr)
        for (int dc = -1; dc <= 1; ++dc) ok = ok && usable(r + dr, c + dc);
      if (!ok) continue;
      ++count;
      for (std::size_t k = 0; k < nb; ++k) {
        std::array<double, 9> v{};
        for (int i = 0; i < 9; ++i) v[static_cast<std::size_t>(i)] = s.at(r + i / 3 - 1, c + i % 3 - 1, s.good[k]);
        const double centre = v[4];
        double ref = 0.0;
        if (e == estimator_id<Mean3x3Noise>()) {
          for (std::size_t i = 0; i < 9; ++i) ref += i == 4 ? 0.0 : v[i];
          ref /= 8.0;
        } else {
          std::nth_element(v.begin(), v.begin() + 4, v.end());
          ref = v[4];
        }
        out[k] = centre - ref;
      }
    }
  return R;
}

RefMoments ref_moments(const std::vector<double>& M, int nb, std::uint64_t count) {
  const auto n = static_cast<std::size_t>(nb);
  std::vector<long double> sum(n, 0.0L), sum_abs(n, 0.0L), cross(n * n, 0.0L), cross_abs(n * n, 0.0L);
  for (std::size_t row = 0; row < M.size() / n; ++row) {
    const double* x = M.data() + row * n;
    for (std::size_t i = 0; i < n; ++i) {
      sum[i] += x[i];
      sum_abs[i] += std::fabs(x[i]);
      for (std::size_t j = 0; j < n; ++j) {
        const long double p = static_cast<long double>(x[i]) * x[j];
        cross[i * n + j] += p;
        cross_abs[i * n + j] += std::fabs(p);
      }
    }
  }
  RefMoments m;
  m.count = count;
  auto to_double = [](const std::vector<long double>& v) { return std::vector<double>(v.begin(), v.end()); };
  m.sum = to_double(sum);
  m.sum_scale = to_double(sum_abs);
  m.cross = to_double(cross);
  m.cross_scale = to_double(cross_abs);
  return m;
}

void expect_close(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& scale,
                  double tol, const char* what, int upper_of) {
  ASSERT_EQ(a.size(), b.size()) << what;
  int reported = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (upper_of > 0 && static_cast<int>(i) % upper_of < static_cast<int>(i) / upper_of) continue;
    const double bound = tol * std::max(scale[i], std::numeric_limits<double>::min());
    if (!(std::fabs(a[i] - b[i]) <= bound) && reported++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: " << a[i] << " vs " << b[i] << " (bound " << bound << ")";
  }
}

}  // namespace hb::kernels::mnf::test
