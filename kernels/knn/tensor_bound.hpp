// The error bound of the tensor method (kernels/knn/tensor.cu): how far a squared
// euclidean distance expanded from a TF32 tensor-core inner product can lie from the
// FP32 distance that the exact methods compute (kernels/knn/README.md, "Conventions").
// Host and device: CI tests it on the CPU against emulated TF32 products.
//
// Derivation. u = 2^-24 (FP32), q and t finite FP32 rows of d bands, Q = |q|^2,
// T = |t|^2, s = q.t exactly, P = sum |q_i t_i| <= |q||t| <= (Q + T) / 2.
//  * Norms: qn = fl32(FP64 band-order sum of q_i^2), so |qn - Q| <= (u + 2^-36) Q for
//    d < 2^16; S = fl32(qn + tn) >= 0, and Q + T <= S (1 + 3u).
//  * Exact inner product ip_f (an FP32 FMA chain or any FP32 summation order, as in
//    cuBLAS SGEMM, split-K included): |ip_f - s| <= g_d P, g_d = d u / (1 - d u).
//  * Exact distance D_f = fl32(S - 2 ip_f) (2 ip_f is exact), so
//    |D_f - d| <= |S - (Q + T)| + 2 |ip_f - s| + u |S - 2 ip_f|
//             <= 2.02 u S + g_d (Q + T) + 2.01 u S,   with d = Q + T - 2 s.
//    Where the expansion is recomputed in FP64 (D_f below 2 d eps S), D_f is the float
//    of a band-order FP64 sum: |D_f - d| <= 1.01 u d <= 2.03 u S, since d <= 2 (Q + T).
//  * Tensor-core inner product ip~ (cuBLAS, CUBLAS_COMPUTE_32F_FAST_TF32): the search
//    rounds each input to TF32 by nearest itself (10 stored bits, within 2^-11
//    relative; tensor_round_rows), so the GEMM's own conversion, by nearest or by
//    truncation, leaves it unchanged; products of TF32 values are exact in FP32, and the
//    accumulation is modelled as any-order summation whose every step errs by at most
//    u_a = 2^-20 relative (IEEE FP32 errs by 2^-24; tensor cores align to the largest
//    term and truncate, Fasi et al. 2021, "Numerical behavior of NVIDIA tensor cores",
//    within 2^-23: 8x slack over that), with d + 1 steps (the C = 0 term):
//    g_a = (d+1) u_a / (1 - (d+1) u_a). Products that underflow and are flushed lose
//    less than 2^-126 each. (Left to the GEMM's conversion, which may truncate, each
//    input would err by 2^-10: the bracket twice as wide.)
//  * The rounding, row by row. With q~ = q + dq the rounded row, r_q = |dq| / |q| (at
//    most 2^-11; computed exactly in FP64 as the row is rounded) and r_t likewise, by
//    Cauchy-Schwarz |q~.t~ - q.t| = |q.dt + dq.t + dq.dt| <= (r_q + r_t + r_q r_t)|q||t|.
//    Rounding errors of a row are spread over its bands, so r is about 0.41 2^-11 rather
//    than 2^-11, the bound on each band's own: the bracket about half as wide as one
//    that bounds every band by 2^-11 (then e_t below is 2^-10 + 2^-22 + g_a (...)).
//    With |q||t| <= (Q + T) / 2 and sum |q~_i t~_i| <= |q~||t~| <= (1 + 2^-10 + 2^-22)|q||t|:
//    2 |ip~ - s| <= e_t (Q + T), e_t = r_q + r_t + 2^-22 + g_a (1 + 2^-10 + 2^-22).
//  * D~ = fl32(S - 2 ip~): |D~ - d| <= 4.03 u S + e_t (Q + T) + u e_t S, as above.
//  * Together: |D~ - D_f| <= (9u + 1.001 (e_t + g_d)) S + (2d + 16) 2^-126 =: E, the
//    absolute term covering flushed products and subnormal FP32 results. The scale
//    splits into the rows' shares 1.001 r_q and 1.001 r_t (tensor_rounding_share, a
//    float each rounded up) and the rest (tensor_error_scale), summed rounding up; the
//    search takes the chunk's largest r_t for every training row, one scale a query row.
// The method keeps, per query, every pair whose lower bound D~ - E is at most the k-th
// smallest upper bound D~ + E (both rounded outward), and finishes those exactly.
//
// The screen. The filter first tests each pair with one FMA, x = fl(tn - 2 ip~), and
// works out the pair's bracket only where x <= L(B): a pair with x > L(B) has its lower
// end above the threshold B. With M = qn + N (N the chunk's largest tn, so qn + tn <= M)
// and 2 |ip~| <= (1 + e_t)(Q + T)(1 + 2u) <= 1.01 M (e_t < 0.01 up to d = 8192, the
// method's widest rows):
//  * x >= (tn - 2 ip~) - 2.01 u M, and S >= qn + tn - u M;
//  * D~ = fl(S - 2 ip~) >= qn + tn - 2 ip~ - u M - 2.02 u M >= qn + x - 5.03 u M;
//  * e = fma_ru(S, c, f), c the row's scale: e <= (M (1 + u) c + f)(1 + 2u) =: e_max, and
//    lower = rd(D~ - e) >= D~ - e - 2u (2.02 M + e_max) >= qn + x - e_max (1 + 2u) - 9.07 u M.
// So x > B - qn + e_max (1 + 2u) + 9.07 u M implies lower > B. L(B) adds slack for the
// FP64 arithmetic that forms it (32 u M in place of 9.07 u M, 2^-50 |B|, 2 f) and is
// rounded up to a float; a NaN x passes. No screen (L = +inf) for an infinite or NaN B,
// norms near FP32's range or an unbounded scale.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define HB_KNN_HD __host__ __device__
#else
#define HB_KNN_HD
#endif

namespace hb::kernels::knn {

// E = (tensor_error_scale(d) + share_q + share_t) * S + tensor_error_floor(d),
// S = fl32(qn + tn), share_x = tensor_rounding_share of row x (or a larger one).
HB_KNN_HD inline double tensor_error_scale(int dims) {
  const double u = 0x1p-24, ua = 0x1p-20;
  const double d = dims;
  const double g_d = d * u / (1.0 - d * u);
  const double g_a = (d + 1.0) * ua / (1.0 - (d + 1.0) * ua);
  return 9.0 * u + 1.001 * (0x1p-22 + g_a * (1.0 + 0x1p-10 + 0x1p-22) + g_d);
}
HB_KNN_HD inline double tensor_error_floor(int dims) { return (2.0 * dims + 16.0) * 0x1p-126; }

// The bound's scale rounded up to a float: one FMA (rounded up) per pair.
HB_KNN_HD inline float tensor_error_scale_f(int dims) {
  const double c = tensor_error_scale(dims) * (1.0 + 0x1p-20);
  return static_cast<float>(c);  // rounded to nearest: within 2^-24 c, so still >= the scale
}

// A row's share of the scale, 1.001 r with r = |fl_tf32(x) - x| / |x|, from err2 and
// norm2, the FP64 sums of the row's rounding errors squared and of its values squared
// (relative error under 2^-40 each up to 8192 bands); 0 for a zero row; +inf where r
// exceeds 2^-11, which only subnormal values allow and the derivation's second-order
// terms rule out (every pair of such a row is then kept), or for NaN or infinite rows.
// The caller rounds it up to a float.
HB_KNN_HD inline double tensor_rounding_share(double err2, double norm2) {
  const double inf = __builtin_huge_val();
  if (err2 == 0.0) return 0.0;
  if (!(err2 > 0.0) || !(norm2 > 0.0) || !(norm2 < inf)) return inf;  // NaN too
  const double r = sqrt(err2 / norm2) * (1.0 + 0x1p-40);
  return r <= 0x1p-11 ? 1.001 * r * (1.0 + 0x1p-40) : inf;
}

// L(B) of the screen above, in FP64, for a row of scale c (a float: tensor_error_scale_f
// with the row's share and the chunk's largest added): the caller rounds it up.
HB_KNN_HD inline double tensor_screen_limit(float bound, float qn, float largest, float c, int dims) {
  const double inf = __builtin_huge_val();
  const double m = static_cast<double>(qn) + static_cast<double>(largest);
  const double b = bound;
  if (!(b < inf) || !(m <= 1e37) || !(c <= 1.0f)) return inf;  // NaN too
  const double u = 0x1p-24, f = tensor_error_floor(dims);
  const double e_max = (m * (1.0 + u) * c + f) * (1.0 + 2.0 * u);
  return b - static_cast<double>(qn) + e_max * (1.0 + 2.0 * u) + 32.0 * u * m + 0x1p-50 * (b < 0 ? -b : b) + 2.0 * f;
}

// Usable only where d u_a stays well below 1 (the bound is meaningless beyond).
HB_KNN_HD inline bool tensor_bound_applies(int dims) { return dims >= 1 && dims <= 65536; }

}  // namespace hb::kernels::knn
