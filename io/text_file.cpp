#include "io/text_file.hpp"

#include <fstream>

#include "io/atomic_file.hpp"

namespace hb::io {

Status write_text_file(const std::string& path, const std::string& text) {
  io::AtomicPath out(path);
  {
    std::ofstream file(out.temporary(), std::ios::binary | std::ios::trunc);
    file << text;
    file.close();
    if (!file) return io_error(path, "cannot write the file");
  }
  return out.commit();
}

}  // namespace hb::io
