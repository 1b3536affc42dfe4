// Outputs appear complete or not at all: write to a temporary name beside the final
// one, rename when done, remove the temporary if abandoned.
//
// Every temporary of this process is listed while it lives, so that a signal that stops
// the process can remove them (remove_live_temporaries). Temporaries that a killed
// process could not remove are removed by the next AtomicPath for the same output.
#pragma once

#include <string>

#include "src/base/error.hpp"

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

// The hidden name of this process's temporary for `final_path`, beside it:
// ".NAME.tmp.PID" (plus "." + `tag` when given, for several temporaries of one output).
std::string temporary_path(const std::string& final_path, const std::string& tag = {});

// Lists `path` among the files removed when a signal stops the process, until untracked.
void track_temporary(const std::string& path);
void untrack_temporary(const std::string& path);

// Removes every tracked temporary; returns how many it removed. Called from the
// signal-watching thread, never from a signal handler.
int remove_live_temporaries();

// Removes the temporaries of `final_path` left by processes of this host that no longer
// run (killed before they could clean up); returns how many it removed.
int remove_stale_temporaries(const std::string& final_path);

}  // namespace hb::io
