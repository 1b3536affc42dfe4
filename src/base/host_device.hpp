// HB_HOST_DEVICE marks a function written once for host and device code: nvcc compiles
// it for both, a plain C++ compiler sees an ordinary inline function.
#pragma once

#if defined(__CUDACC__)
#define HB_HOST_DEVICE __host__ __device__
#else
#define HB_HOST_DEVICE
#endif
