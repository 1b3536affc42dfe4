#include "src/base/error.hpp"

namespace hb {

std::string Error::line() const {
  std::string out;
  if (!file.empty()) out += file + ": ";
  if (!field.empty()) out += "field '" + field + "': ";
  out += message;
  return out;
}

Error bad_input(std::string file, std::string field, std::string message) {
  return Error{ErrorKind::bad_input, std::move(file), std::move(field), std::move(message)};
}

Error io_error(std::string file, std::string message) {
  return Error{ErrorKind::io, std::move(file), {}, std::move(message)};
}

}  // namespace hb
