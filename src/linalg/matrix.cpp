#include "src/linalg/matrix.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>

namespace hb::linalg {
namespace {

int blas_int(std::int64_t n) { return static_cast<int>(n); }

Matrix gemm(const Matrix& a, bool transpose_a, const Matrix& b) {
  const std::int64_t m = transpose_a ? a.cols : a.rows;
  const std::int64_t k = transpose_a ? a.rows : a.cols;
  Matrix c(m, b.cols);
  if (m == 0 || b.cols == 0 || k == 0) return c;
  cblas_dgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans, CblasNoTrans, blas_int(m),
              blas_int(b.cols), blas_int(k), 1.0, a.data.data(), blas_int(a.cols), b.data.data(),
              blas_int(b.cols), 0.0, c.data.data(), blas_int(c.cols));
  return c;
}

}  // namespace

Matrix Matrix::identity(std::int64_t n) {
  Matrix m(n, n);
  for (std::int64_t i = 0; i < n; ++i) m(i, i) = 1.0;
  return m;
}

Matrix multiply(const Matrix& a, const Matrix& b) { return gemm(a, false, b); }
Matrix multiply_at_b(const Matrix& a, const Matrix& b) { return gemm(a, true, b); }

Matrix transpose(const Matrix& a) {
  Matrix t(a.cols, a.rows);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < a.cols; ++j) t(j, i) = a(i, j);
  return t;
}

Matrix first_columns(const Matrix& a, std::int64_t count) {
  count = std::min(count, a.cols);
  Matrix out(a.rows, count);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < count; ++j) out(i, j) = a(i, j);
  return out;
}

void symmetrize_from_upper(Matrix& a) {
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < i; ++j) a(i, j) = a(j, i);
}

double max_abs_difference(const Matrix& a, const Matrix& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.data.size(); ++i) worst = std::max(worst, std::abs(a.data[i] - b.data[i]));
  return worst;
}

}  // namespace hb::linalg
