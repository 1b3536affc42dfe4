// main() for gtest binaries run under mpirun: initialises MPI, lets rank 0 print the
// usual gtest report (other ranks print only their failures, prefixed by rank), and
// exits non-zero on every rank when a test failed on any rank.
#include <gtest/gtest.h>

#include <cstdio>

#include "mpi/comm.hpp"

namespace {

class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_,
                 result.file_name() != nullptr ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  hb::mpi::Runtime runtime(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const auto world = hb::mpi::Comm::world();
  if (!world.is_root()) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(world.rank()));
  }
  const int failed_here = RUN_ALL_TESTS() != 0 ? 1 : 0;
  return world.any(failed_here != 0) ? 1 : 0;
}
