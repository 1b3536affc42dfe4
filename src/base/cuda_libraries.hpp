// cuBLAS and cuSOLVER are opened on first use, not when the process starts: linked in,
// their libraries (cuBLAS Lt's static initialisers above all) took 0.4 s of every start
// of a CUDA build on a 2-core workstation and 0.07-0.1 s on an H200 host, `hyperbatch
// info` included, which uses neither. cuda_libraries.cpp defines the entry points
// hyperbatch calls; each opens its library by its soname on first use and forwards to
// it. A command that can use the GPU opens them on the thread that starts its CUDA
// context (warm_up_device), so its first GEMM does not wait. An entry point not
// forwarded there does not link: add its forwarder beside the others.
#pragma once

namespace hb::cuda {

// Opens cuBLAS and cuSOLVER now (once a process); false where either cannot be opened,
// after which their calls return CUBLAS_STATUS_NOT_INITIALIZED /
// CUSOLVER_STATUS_NOT_INITIALIZED.
bool open_math_libraries();

// Runs one small FP32 and one TF32 GEMM on `device`, on a stream of its own, and waits
// for them. A process's first GEMM pays cuBLAS's own start (its kernels' modules loaded,
// its state made: 0.08-0.13 s on an H200, then about 0.02-0.05 s for each further kind
// of product); run on the warm-up thread beside a command's set-up, that start is off
// the first tile's search. Does nothing where the GPU or cuBLAS cannot be used.
void prime_gemms(int device);

}  // namespace hb::cuda
