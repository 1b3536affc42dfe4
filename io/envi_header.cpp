#include "io/envi_header.hpp"
// PLACEHOLDER: being implemented.
namespace hb::io {
Result<EnviHeader> parse_envi_header(std::string_view, const std::string& file) {
  return Error{ErrorKind::internal, file, {}, "not implemented"};
}
Result<EnviHeader> read_envi_header(const std::string& p) { return Error{ErrorKind::internal, p, {}, "not implemented"}; }
std::string format_envi_header(const EnviHeader&) { return {}; }
Result<EnviPaths> resolve_envi_paths(const std::string& p) { return Error{ErrorKind::internal, p, {}, "not implemented"}; }
}  // namespace hb::io
