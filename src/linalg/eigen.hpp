// Symmetric eigendecomposition (LAPACK dsyevd) with a deterministic order and sign,
// so that every rank, backend and run produces the same basis.
#pragma once

#include <functional>
#include <vector>

#include "src/base/error.hpp"
#include "src/linalg/matrix.hpp"

namespace hb::linalg {

struct SymmetricEigen {
  std::vector<double> values;  // descending
  Matrix vectors;              // column j is the unit eigenvector of values[j]
};

// `a` must be square; only its upper triangle is read. Sign convention: the entry of
// largest magnitude in each eigenvector is positive (the first such entry on a tie),
// so results do not depend on LAPACK's internal choices.
Result<SymmetricEigen> symmetric_eigen(const Matrix& a);

// Flips `v`'s columns to the sign convention above.
void normalise_signs(Matrix& v);

// Turns an ascending eigensolver result (LAPACK and cuSOLVER order; column j of the
// column-major `vectors_col_major` is the vector of ascending[j]) into the descending,
// sign-normalised form above.
SymmetricEigen descending_eigen(std::int64_t n, const std::vector<double>& ascending,
                                const std::vector<double>& vectors_col_major);

// Where the decomposition runs: LAPACK by default, cuSOLVER on the CUDA backend.
using EigenSolver = std::function<Result<SymmetricEigen>(const Matrix&)>;

}  // namespace hb::linalg
