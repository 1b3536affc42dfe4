#include "src/linalg/eigen.hpp"

#include <lapacke.h>

#include <cmath>
#include <string>

namespace hb::linalg {

void normalise_signs(Matrix& v) {
  for (std::int64_t j = 0; j < v.cols; ++j) {
    double largest = 0.0;
    std::int64_t at = 0;
    for (std::int64_t i = 0; i < v.rows; ++i) {
      // A relative margin makes near-ties resolve to the first index whatever the rounding.
      if (std::abs(v(i, j)) > largest * (1.0 + 1e-9)) {
        largest = std::abs(v(i, j));
        at = i;
      }
    }
    if (v(at, j) < 0.0)
      for (std::int64_t i = 0; i < v.rows; ++i) v(i, j) = -v(i, j);
  }
}

Result<SymmetricEigen> symmetric_eigen(const Matrix& a) {
  if (a.rows != a.cols) return Error{ErrorKind::internal, {}, {}, "eigendecomposition of a non-square matrix"};
  const std::int64_t n = a.rows;
  if (n == 0) return SymmetricEigen{};
  for (double x : a.data)
    if (!std::isfinite(x)) return Error{ErrorKind::bad_input, {}, {}, "matrix to decompose has non-finite entries"};

  // Row-major upper triangle = column-major lower triangle: ask LAPACK for 'L' on a
  // column-major copy, the layout cuSOLVER also uses, so both share descending_eigen.
  std::vector<double> work = a.data;
  std::vector<double> ascending(static_cast<std::size_t>(n));
  const lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', static_cast<lapack_int>(n), work.data(),
                                         static_cast<lapack_int>(n), ascending.data());
  if (info != 0)
    return Error{ErrorKind::internal, {}, {}, "LAPACKE_dsyevd failed with info " + std::to_string(info)};
  return descending_eigen(n, ascending, work);
}

SymmetricEigen descending_eigen(std::int64_t n, const std::vector<double>& ascending,
                                const std::vector<double>& vectors_col_major) {
  SymmetricEigen out{std::vector<double>(static_cast<std::size_t>(n)), Matrix(n, n)};
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t from = n - 1 - j;
    out.values[static_cast<std::size_t>(j)] = ascending[static_cast<std::size_t>(from)];
    for (std::int64_t i = 0; i < n; ++i) out.vectors(i, j) = vectors_col_major[static_cast<std::size_t>(from * n + i)];
  }
  normalise_signs(out.vectors);
  return out;
}

}  // namespace hb::linalg
