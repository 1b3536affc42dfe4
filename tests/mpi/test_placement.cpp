// Where ranks run (mpi::placement) under real mpirun ranks (1-3): every rank of a host
// gets a local rank of its own, whatever launcher variables it inherited.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <set>
#include <string>

#include "mpi/comm.hpp"

namespace hb {
namespace {

// Sets (or, with nullopt, removes) an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Every rank here runs on one host: the local ranks are 0 .. size - 1, each once.
void expect_local_ranks_of_their_own(const mpi::Comm& world) {
  const auto where = mpi::placement(world);
  EXPECT_EQ(where.local_size, world.size());
  const auto all = world.allgather(where.local_rank);
  const std::set<std::int64_t> distinct(all.begin(), all.end());
  EXPECT_EQ(distinct.size(), all.size());
  EXPECT_EQ(*distinct.begin(), 0);
  EXPECT_EQ(*distinct.rbegin(), world.size() - 1);
}

TEST(Placement, RanksOfAHostHaveLocalRanksOfTheirOwn) { expect_local_ranks_of_their_own(mpi::Comm::world()); }

TEST(Placement, MpirunsLocalRankBeatsAnInheritedSlurmLocalId) {
  // mpirun inside a Slurm batch script: every rank inherits the batch step's SLURM_LOCALID=0.
  const ScopedEnv slurm("SLURM_LOCALID", "0");
  const ScopedEnv ompi("OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(mpi::Comm::world().rank()));
  EXPECT_EQ(mpi::launcher_local_rank(), mpi::Comm::world().rank());
  expect_local_ranks_of_their_own(mpi::Comm::world());
}

TEST(Placement, AnInheritedLocalRankSharedByEveryRankIsNotBelieved) {
  const ScopedEnv slurm("SLURM_LOCALID", "0");
  const ScopedEnv ompi("OMPI_COMM_WORLD_LOCAL_RANK", std::nullopt);
  const ScopedEnv hydra("MPI_LOCALRANKID", std::nullopt);
  EXPECT_EQ(mpi::launcher_local_rank(), 0);
  expect_local_ranks_of_their_own(mpi::Comm::world());
}

}  // namespace
}  // namespace hb
