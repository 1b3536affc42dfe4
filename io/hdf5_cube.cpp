#include "io/hdf5_cube.hpp"
// PLACEHOLDER: being implemented.
namespace hb::io {
Result<std::unique_ptr<Cube>> open_hdf5_cube(const std::string& p, const mpi::Comm*) { return Error{ErrorKind::internal, p, {}, "not implemented"}; }
Result<std::unique_ptr<CubeWriter>> create_hdf5_cube(const std::string& p, const CubeInfo&, const mpi::Comm*) {
  return Error{ErrorKind::internal, p, {}, "not implemented"};
}
}  // namespace hb::io
