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
//  * Tensor-core inner product ip~ (cuBLAS, CUBLAS_COMPUTE_32F_FAST_TF32): each input is
//    rounded to TF32 (10 stored bits; by nearest or by truncation, both within 2^-10
//    relative), products of TF32 values are exact in FP32, and the accumulation is
//    modelled as any-order summation whose every step errs by at most u_a = 2^-20
//    relative (IEEE FP32 errs by 2^-24; tensor cores align to the largest term and
//    truncate, Fasi et al. 2021, "Numerical behavior of NVIDIA tensor cores", within
//    2^-23: 8x slack over that), with d + 1 steps (the C = 0 term): g_a = (d+1) u_a / (1 - (d+1) u_a).
//    |ip~ - s| <= e_t P, e_t = 2^-9 + 2^-20 + g_a (1 + 2^-9 + 2^-20); products that
//    underflow and are flushed lose less than 2^-126 each.
//  * D~ = fl32(S - 2 ip~): |D~ - d| <= 4.03 u S + e_t (Q + T) + u e_t S, as above.
//  * Together: |D~ - D_f| <= (9u + 1.001 (e_t + g_d)) S + (2d + 16) 2^-126 =: E, the
//    absolute term covering flushed products and subnormal FP32 results.
// The method keeps, per query, every pair whose lower bound D~ - E is at most the k-th
// smallest upper bound D~ + E (both rounded outward), and finishes those exactly.
#pragma once

#if defined(__CUDACC__)
#define HB_KNN_HD __host__ __device__
#else
#define HB_KNN_HD
#endif

namespace hb::kernels::knn {

// E = tensor_error_scale(d) * S + tensor_error_floor(d), S = fl32(qn + tn).
HB_KNN_HD inline double tensor_error_scale(int dims) {
  const double u = 0x1p-24, ua = 0x1p-20;
  const double d = dims;
  const double g_d = d * u / (1.0 - d * u);
  const double g_a = (d + 1.0) * ua / (1.0 - (d + 1.0) * ua);
  const double e_t = 0x1p-9 + 0x1p-20 + g_a * (1.0 + 0x1p-9 + 0x1p-20);
  return 9.0 * u + 1.001 * (e_t + g_d);
}
HB_KNN_HD inline double tensor_error_floor(int dims) { return (2.0 * dims + 16.0) * 0x1p-126; }

// The bound's scale rounded up to a float: one FMA (rounded up) per pair.
HB_KNN_HD inline float tensor_error_scale_f(int dims) {
  const double c = tensor_error_scale(dims) * (1.0 + 0x1p-20);
  return static_cast<float>(c);  // rounded to nearest: within 2^-24 c, so still >= the scale
}

// Usable only where d u_a stays well below 1 (the bound is meaningless beyond).
HB_KNN_HD inline bool tensor_bound_applies(int dims) { return dims >= 1 && dims <= 65536; }

}  // namespace hb::kernels::knn
