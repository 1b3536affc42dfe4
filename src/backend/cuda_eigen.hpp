// Symmetric eigendecomposition on the GPU with cuSOLVER (dsyevd), returned in the
// same descending, sign-normalised form as linalg::symmetric_eigen so that the CPU
// and CUDA bases agree to rounding (tests/src/test_mnf_backends.cpp).
#pragma once

#include "io/error.hpp"
#include "src/linalg/eigen.hpp"

namespace hb::cuda {

Result<linalg::SymmetricEigen> symmetric_eigen(const linalg::Matrix& a, int device);

}  // namespace hb::cuda
