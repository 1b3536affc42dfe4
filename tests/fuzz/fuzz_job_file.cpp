// libFuzzer entry point for the job-file parser (TOML). Any input must parse or fail
// cleanly as a bad_input error naming the file and a key; whatever parses must hold the
// invariants the runner relies on: a name, an output folder, safe generated-scene names
// and generated sizes whose byte counts fit in 64 bits.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "jobs/job_file.hpp"

namespace {

const std::string kFile = "/fuzz/job.toml";

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_job_file: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void check_parsed(const hb::jobs::JobSpec& job) {
  if (job.name.empty() || job.output.empty()) fail("a parsed job lacks a name or an output", job.name + " " + job.output);
  for (const auto& g : job.generate) {
    if (!hb::jobs::is_safe_scene_name(g.name)) fail("an unsafe [[generate]] name was accepted", g.name);
    if (hb::jobs::generated_disk_bytes(g) <= hb::jobs::generated_scene_bytes(g))
      fail("a generated size overflowed", g.name);
  }
  for (const auto& s : job.explicit_scenes)
    if (!s.name.empty() && !hb::jobs::is_safe_scene_name(s.name)) fail("an unsafe scene name was accepted", s.name);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = hb::jobs::parse_job_text(text, kFile);
  if (!parsed.ok()) {
    const auto& error = parsed.error();
    if (error.kind != hb::ErrorKind::bad_input || error.file != kFile || error.field.empty() || error.message.empty())
      fail("a failed parse must be a bad_input error naming the file and a key", error.line());
    if (error.message.rfind("line ", 0) != 0) fail("a job-file error must name its line", error.line());
    return 0;
  }
  check_parsed(*parsed);
  return 0;
}
