// Small dense float64 matrices (band x band covariances and transforms), row-major.
// BLAS does the products; these are never scene-sized.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hb::linalg {

struct Matrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<double> data;  // row-major, rows * cols

  Matrix() = default;
  Matrix(std::int64_t r, std::int64_t c) : rows(r), cols(c), data(static_cast<std::size_t>(r * c), 0.0) {}
  static Matrix identity(std::int64_t n);

  double& operator()(std::int64_t i, std::int64_t j) { return data[static_cast<std::size_t>(i * cols + j)]; }
  double operator()(std::int64_t i, std::int64_t j) const {
    return data[static_cast<std::size_t>(i * cols + j)];
  }
};

Matrix multiply(const Matrix& a, const Matrix& b);       // a b
Matrix multiply_at_b(const Matrix& a, const Matrix& b);  // aᵀ b
Matrix transpose(const Matrix& a);
Matrix first_columns(const Matrix& a, std::int64_t count);
// Copies the upper triangle onto the lower one (SYRK fills only one triangle).
void symmetrize_from_upper(Matrix& a);
// Largest |a_ij - b_ij|; shapes must match.
double max_abs_difference(const Matrix& a, const Matrix& b);

}  // namespace hb::linalg
