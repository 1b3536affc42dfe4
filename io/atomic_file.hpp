// Outputs appear complete or not at all: write to a temporary name beside the final
// one, rename when done, remove the temporary if abandoned.
#pragma once

#include <string>

#include "io/error.hpp"

namespace hb::io {

class AtomicPath {
 public:
  explicit AtomicPath(std::string final_path);
  ~AtomicPath();  // removes the temporary file unless committed
  AtomicPath(const AtomicPath&) = delete;
  AtomicPath& operator=(const AtomicPath&) = delete;
  AtomicPath(AtomicPath&&) noexcept;
  AtomicPath& operator=(AtomicPath&&) = delete;

  const std::string& temporary() const { return temporary_; }
  const std::string& final_path() const { return final_; }
  Status commit();  // rename temporary -> final
  void abandon();   // remove temporary now

 private:
  std::string final_;
  std::string temporary_;
  bool done_ = false;
};

}  // namespace hb::io
