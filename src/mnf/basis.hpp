// The MNF and PCA bases from second-order statistics, component selection, and the
// linear maps that apply them (forward transform, denoising).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/error.hpp"
#include "src/linalg/eigen.hpp"
#include "src/linalg/matrix.hpp"
#include "src/mnf/linear_map.hpp"
#include "src/mnf/stats.hpp"

namespace hb::mnf {

enum class Method { mnf, pca };
std::string_view method_name(Method method);  // "mnf" / "pca"

struct Basis {
  Method method = Method::mnf;
  std::vector<std::int64_t> bands;  // scene bands of the matrix rows below
  std::vector<double> mean;         // [bands]
  std::vector<double> eigenvalues;  // [r] descending; MNF: SNR + 1 (noise is whitened)
  linalg::Matrix forward;           // [bands x r]: z = forwardᵀ (x - mean)
  linalg::Matrix inverse;           // [bands x r]: x = mean + inverse z; forwardᵀ inverse = I
  std::vector<std::string> warnings;
  std::int64_t dropped_directions = 0;  // near-singular noise directions left out (MNF)

  std::int64_t components() const { return forward.cols; }
};

struct BasisOptions {
  // Noise eigenvalues <= tolerance x the largest are treated as zero.
  double singular_tolerance = 1e-10;
  // The backend's solver (cuSOLVER on CUDA); LAPACK when empty.
  linalg::EigenSolver eigen;
};

// MNF (Green et al. 1988; the steps of Zhou et al. 2017): eig(N) = U D U^T,
// P = U D^-1/2, eig(Pᵀ C P) = V L, T = P V. Noise directions with eigenvalue
// <= tolerance x max (a constant band, duplicated bands, a bad band left in) are
// dropped from P — their SNR is undefined — and reported in `warnings` with the bands
// that dominate them; the basis then has fewer components than bands, never NaNs.
// Forward columns follow linalg's sign convention (largest-magnitude entry positive).
Result<Basis> mnf_basis(const MeanCovariance& data, const linalg::Matrix& noise_covariance,
                        std::span<const std::int64_t> bands, const BasisOptions& options = {});
// PCA: eig(C) = V L; forward = inverse = V.
Result<Basis> pca_basis(const MeanCovariance& data, std::span<const std::int64_t> bands,
                        const BasisOptions& options = {});

// At most one of the three; none keeps every component.
struct Selection {
  std::optional<std::int64_t> components;  // the first N
  std::optional<double> snr;               // MNF: eigenvalue >= snr + 1 (SPy num_with_snr)
  std::optional<double> variance;          // smallest N whose eigenvalues sum to >= F of the total
};
Result<std::int64_t> select_components(const Basis& basis, const Selection& selection);

// z = forwardᵀ (x - mean) for the first m components.
LinearMap reduction_map(const Basis& basis, std::int64_t m);
// x' = mean + inverse_m forward_mᵀ (x - mean): SPy's MNFResult.denoise(num=m) exactly.
LinearMap denoise_map(const Basis& basis, std::int64_t m);

}  // namespace hb::mnf
