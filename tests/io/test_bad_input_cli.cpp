// Bad ENVI input through the built CLI: exit code 3, exactly one stderr line naming
// the file and the field, and no output file left behind.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "tests/io/envi_test_support.hpp"
#include "tests/support/cli_path.hpp"

namespace hb::io {
namespace {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CliRun run_cli(const test::TempDir& dir, const std::string& arguments) {
  const std::string command = "cd '" + dir.file("") + "' && '" + hb::test::cli_path() + "' " + arguments +
                              " >'" + dir.file("stdout.txt") + "' 2>'" + dir.file("stderr.txt") + "'";
  const int status = std::system(command.c_str());
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = test::read_file(dir.file("stdout.txt"));
  run.err = test::read_file(dir.file("stderr.txt"));
  std::filesystem::remove(dir.file("stdout.txt"));
  std::filesystem::remove(dir.file("stderr.txt"));
  return run;
}

void expect_one_line_naming(const CliRun& run, const std::string& file, const std::string& field) {
  EXPECT_EQ(run.exit_code, 3) << run.err;
  ASSERT_FALSE(run.err.empty());
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << "more than one line:\n" << run.err;
  EXPECT_NE(run.err.find(file), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("'" + field + "'"), std::string::npos) << run.err;
}

TEST(EnviBadInputCli, InfoOnAHeaderWithAnUnknownDataType) {
  test::TempDir dir;
  test::write_file(dir.file("bad.hdr"), test::header_text(2, 2, 1, 7));
  test::write_file(dir.file("bad.img"), "1234");
  expect_one_line_naming(run_cli(dir, "info bad.hdr"), "bad.hdr", "data type");
}

TEST(EnviBadInputCli, InfoOnAScanWhoseDataFileIsTooShort) {
  test::TempDir dir;
  test::write_file(dir.file("short.hdr"), test::header_text(2, 2, 1, 2));
  test::write_file(dir.file("short.img"), "123");
  expect_one_line_naming(run_cli(dir, "info short.hdr"), "short.img", "size");
}

TEST(EnviBadInputCli, IngestOfABadHeaderLeavesNoOutputFile) {
  test::TempDir dir;
  test::write_file(dir.file("bad.hdr"), test::header_text(2, 2, 3, 2, "wavelength = {400, 500}\n"));
  test::write_file(dir.file("bad.img"), std::string(24, '\0'));
  expect_one_line_naming(run_cli(dir, "ingest bad.hdr -o out.h5"), "bad.hdr", "wavelength");
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"bad.hdr", "bad.img"}));  // no out.h5, no temporaries
}

TEST(EnviBadInputCli, InfoOnAGoodSceneDescribesIt) {
  test::TempDir dir;
  test::write_file(dir.file("good.hdr"), test::header_text(3, 2, 4, 12, "interleave = bil\nbyte order = 1\n"));
  test::write_file(dir.file("good.img"), std::string(3 * 2 * 4 * 2, '\0'));
  const CliRun run = run_cli(dir, "info --json good.hdr");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("\"lines\": 3"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\"samples\": 2"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\"interleave\": \"bil\""), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\"data_type\": \"uint16\""), std::string::npos) << run.out;
}

}  // namespace
}  // namespace hb::io
