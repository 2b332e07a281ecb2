// `weakscale calibrate` with bad flags: one line "weakscale: error: ...", exit 2, nothing measured.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Run {
  int exit_code = -1;
  std::string err;
};

Run calibrate(const std::string& args) {
  const auto err_file = std::filesystem::temp_directory_path() /
                        ("weakscale-calibrate-flags-" + std::to_string(::getpid()) + ".txt");
  const std::string command =
      "'" + std::string(WEAKSCALE_EXE) + "' calibrate " + args + " >/dev/null 2>'" + err_file.string() + "'";
  Run run;
  const int status = std::system(command.c_str());
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  std::ostringstream text;
  text << in.rdbuf();
  run.err = text.str();
  std::filesystem::remove(err_file);
  return run;
}

void expect_one_line_error(const Run& run, const std::string& mentions, int exit_code = 2) {
  EXPECT_EQ(run.exit_code, exit_code) << run.err;
  EXPECT_THAT(run.err, StartsWith("weakscale: error: "));
  EXPECT_THAT(run.err, HasSubstr(mentions));
  ASSERT_FALSE(run.err.empty());
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << "more than one line:\n" << run.err;
}

TEST(CalibrateFlags, MissingOutIsOneLineError) { expect_one_line_error(calibrate("--quick"), "--out"); }

TEST(CalibrateFlags, UnknownFlagIsOneLineError) {
  expect_one_line_error(calibrate("--out /tmp/x.yaml --fast"), "--fast");
}

TEST(CalibrateFlags, OneRankIsOneLineError) {
  expect_one_line_error(calibrate("--out /tmp/x.yaml --ranks 1"), "--ranks");
}

TEST(CalibrateFlags, MoreRanksThanCoresIsOneLineError) {
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  expect_one_line_error(calibrate("--out /tmp/x.yaml --quick --ranks " + std::to_string(cores + 1)), "--ranks");
}

// An --out that cannot be written is an output error (exit 4), found before the minute of measuring.
TEST(CalibrateFlags, OutInMissingDirectoryIsOneLineError) {
  expect_one_line_error(calibrate("--quick --out /nonexistent-dir/x.yaml"), "--out", 4);
  const auto dir = std::filesystem::path(::testing::TempDir()) / "weakscale-calibrate-read-only";
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  // root writes anywhere: the read-only case is only a test for other users.
  if (::geteuid() != 0) expect_one_line_error(calibrate("--quick --out " + (dir / "x.yaml").string()), "--out", 4);
  expect_one_line_error(calibrate("--quick --out " + ::testing::TempDir()), "is a directory", 4);
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
  std::filesystem::remove_all(dir);
}

TEST(CalibrateFlags, NetnsRateWithoutUnitIsOneLineErrorNamingTheUnits) {
  const ::Run result = calibrate("--out /tmp/x.yaml --quick --netns-rate 1");
  expect_one_line_error(result, "--netns-rate");
  EXPECT_THAT(result.err, HasSubstr("Gb/s"));
}

}  // namespace
