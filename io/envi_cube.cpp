#include "io/envi_cube.hpp"
// PLACEHOLDER: being implemented.
namespace hb::io {
Result<std::unique_ptr<Cube>> open_envi_cube(const std::string& p) { return Error{ErrorKind::internal, p, {}, "not implemented"}; }
Result<std::unique_ptr<CubeWriter>> create_envi_cube(const std::string& p, const CubeInfo&, Interleave, ByteOrder) {
  return Error{ErrorKind::internal, p, {}, "not implemented"};
}
}  // namespace hb::io
