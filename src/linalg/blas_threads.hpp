// BLAS/LAPACK on one thread for a scope. Threaded OpenBLAS rounds differently with its
// thread count, which changes with how many MPI ranks share a node: the small dense
// problems whose bits must not depend on that (the MNF/PCA eigendecompositions) run
// single-threaded.
#pragma once

#include <cblas.h>

namespace hb::linalg {

class SingleThreadedBlas {
 public:
  SingleThreadedBlas() : threads_(openblas_get_num_threads()) { openblas_set_num_threads(1); }
  ~SingleThreadedBlas() { openblas_set_num_threads(threads_); }
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  int threads_;
};

}  // namespace hb::linalg
