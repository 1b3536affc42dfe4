#include "src/mnf/basis.hpp"

#include "src/linalg/blas_threads.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <cmath>

#include "src/linalg/eigen.hpp"

namespace hb::mnf {
namespace {

// Scene bands whose loading on column j is at least half the largest one.
std::vector<std::int64_t> dominant_bands(const linalg::Matrix& u, std::int64_t j,
                                         std::span<const std::int64_t> bands) {
  double largest = 0.0;
  for (std::int64_t i = 0; i < u.rows; ++i) largest = std::max(largest, std::abs(u(i, j)));
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < u.rows; ++i)
    if (std::abs(u(i, j)) >= 0.5 * largest) out.push_back(bands[static_cast<std::size_t>(i)]);
  return out;
}

void symmetrize(linalg::Matrix& a) {
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < i; ++j) a(i, j) = a(j, i) = 0.5 * (a(i, j) + a(j, i));
}

}  // namespace

std::string_view method_name(Method method) { return method == Method::mnf ? "mnf" : "pca"; }

Result<Basis> mnf_basis(const MeanCovariance& data, const linalg::Matrix& noise_covariance,
                        std::span<const std::int64_t> bands, const BasisOptions& options) {
  const linalg::SingleThreadedBlas same_bits_for_any_rank_count;
  const std::int64_t n = noise_covariance.rows;
  if (data.covariance.rows != n || static_cast<std::int64_t>(bands.size()) != n)
    return Error{ErrorKind::internal, {}, {}, "data and noise covariances disagree on the band count"};
  const auto eigen = options.eigen ? options.eigen : linalg::EigenSolver(linalg::symmetric_eigen);
  auto noise = eigen(noise_covariance);
  if (!noise) return noise.error();
  const double largest = noise->values.empty() ? 0.0 : noise->values.front();
  if (!(largest > 0.0))
    return Error{ErrorKind::bad_input, {}, "noise", "noise covariance is zero: no residual varies (constant scene?)"};

  Basis basis;
  basis.method = Method::mnf;
  basis.bands.assign(bands.begin(), bands.end());
  basis.mean = data.mean;
  std::int64_t kept = 0;
  while (kept < n && noise->values[static_cast<std::size_t>(kept)] > options.singular_tolerance * largest) ++kept;
  basis.dropped_directions = n - kept;
  for (std::int64_t j = kept; j < n; ++j)
    basis.warnings.push_back(fmt::format(
        "noise covariance is singular: dropped a direction with noise variance {:.3g} (largest {:.3g}), "
        "dominated by band(s) {}",
        noise->values[static_cast<std::size_t>(j)], largest, fmt::join(dominant_bands(noise->vectors, j, bands), ",")));

  // P = U_r D_r^-1/2 whitens the noise.
  linalg::Matrix whitening(n, kept);
  for (std::int64_t j = 0; j < kept; ++j) {
    const double scale = 1.0 / std::sqrt(noise->values[static_cast<std::size_t>(j)]);
    for (std::int64_t i = 0; i < n; ++i) whitening(i, j) = noise->vectors(i, j) * scale;
  }
  linalg::Matrix whitened = linalg::multiply_at_b(whitening, linalg::multiply(data.covariance, whitening));
  symmetrize(whitened);
  auto signal = eigen(whitened);
  if (!signal) return signal.error();
  basis.eigenvalues = signal->values;
  basis.forward = linalg::multiply(whitening, signal->vectors);
  linalg::normalise_signs(basis.forward);
  basis.inverse = linalg::multiply(noise_covariance, basis.forward);  // N T = U D^1/2 V
  return basis;
}

Result<Basis> pca_basis(const MeanCovariance& data, std::span<const std::int64_t> bands, const BasisOptions& options) {
  const linalg::SingleThreadedBlas same_bits_for_any_rank_count;
  if (static_cast<std::int64_t>(bands.size()) != data.covariance.rows)
    return Error{ErrorKind::internal, {}, {}, "covariance and band list disagree"};
  auto eig = options.eigen ? options.eigen(data.covariance) : linalg::symmetric_eigen(data.covariance);
  if (!eig) return eig.error();
  Basis basis;
  basis.method = Method::pca;
  basis.bands.assign(bands.begin(), bands.end());
  basis.mean = data.mean;
  basis.eigenvalues = eig->values;
  basis.forward = eig->vectors;
  basis.inverse = eig->vectors;
  return basis;
}

Result<std::int64_t> select_components(const Basis& basis, const Selection& selection) {
  const std::int64_t available = basis.components();
  const int chosen = (selection.components ? 1 : 0) + (selection.snr ? 1 : 0) + (selection.variance ? 1 : 0);
  if (chosen > 1)
    return Error{ErrorKind::usage, {}, "--components", "give at most one of --components, --snr, --variance"};
  if (available == 0) return Error{ErrorKind::bad_input, {}, {}, "the basis has no components"};
  if (selection.components) {
    const auto m = *selection.components;
    const auto bands = static_cast<std::int64_t>(basis.bands.size());
    if (m > available && m <= bands)  // the data, not the request, leave too few
      return Error{ErrorKind::bad_input, {}, "--components",
                   fmt::format("asked for {} components, but the data leave {} of its {} usable bands' directions "
                               "({} dropped: an outlier or a constant band makes the noise covariance singular)",
                               m, available, bands, basis.dropped_directions)};
    if (m < 1 || m > available)
      return Error{ErrorKind::usage, {}, "--components",
                   fmt::format("asked for {} components; between 1 and {} are available", m, available)};
    return m;
  }
  if (selection.snr) {
    if (basis.method != Method::mnf)
      return Error{ErrorKind::usage, {}, "--snr", "an SNR threshold applies to MNF only"};
    std::int64_t m = 0;
    for (double l : basis.eigenvalues) m += l >= *selection.snr + 1.0 ? 1 : 0;
    if (m == 0)
      return Error{ErrorKind::usage, {}, "--snr",
                   fmt::format("no component has SNR >= {} (the largest is {:.4g})", *selection.snr,
                               basis.eigenvalues.front() - 1.0)};
    return m;
  }
  if (selection.variance) {
    const double f = *selection.variance;
    if (!(f > 0.0 && f <= 1.0))
      return Error{ErrorKind::usage, {}, "--variance", "the variance fraction must lie in (0, 1]"};
    double total = 0.0;
    for (double l : basis.eigenvalues) total += std::max(l, 0.0);
    double running = 0.0;
    for (std::int64_t m = 0; m < available; ++m) {
      running += std::max(basis.eigenvalues[static_cast<std::size_t>(m)], 0.0);
      if (running >= f * total * (1.0 - 1e-12)) return m + 1;
    }
  }
  return available;
}

LinearMap reduction_map(const Basis& basis, std::int64_t m) {
  LinearMap map;
  map.center = basis.mean;
  map.matrix = linalg::first_columns(basis.forward, m);
  return map;
}

LinearMap denoise_map(const Basis& basis, std::int64_t m) {
  // y = W_m T_mᵀ (x - mean) + mean, i.e. matrix = T_m W_mᵀ.
  LinearMap map;
  map.center = basis.mean;
  map.offset = basis.mean;
  map.matrix = linalg::multiply(linalg::first_columns(basis.forward, m),
                                linalg::transpose(linalg::first_columns(basis.inverse, m)));
  return map;
}

}  // namespace hb::mnf
