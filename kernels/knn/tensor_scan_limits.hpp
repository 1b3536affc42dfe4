// The shapes tensor's scan path (tensor_scan.cu) takes: euclidean distances over at most
// kTensorScanMaxDims bands and k <= kTensorScanMaxK (a thread's list lives in registers).
// Plain C++, so that the host's --select auto rule (src/knn/select.cpp) follows the
// kernel's limits in builds without CUDA too.
#pragma once

namespace hb::kernels::knn {

inline constexpr int kTensorScanMaxDims = 16;
inline constexpr int kTensorScanMaxK = 8;

}  // namespace hb::kernels::knn
