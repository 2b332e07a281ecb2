#include "base/output_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ws {
namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The file holds the old text or the new text, never a mix, and no temporary is left.
TEST(OutputFile, ReplacesAtomicallyAndLeavesNoTemporary) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "weakscale-output-file";
  std::filesystem::remove_all(dir);
  const auto path = dir / "sub" / "table.csv";
  write_file_atomically(path, "a,b\n1,2\n");
  EXPECT_EQ(read(path), "a,b\n1,2\n");
  write_file_atomically(path, "new\n");
  EXPECT_EQ(read(path), "new\n");
  EXPECT_FALSE(std::filesystem::exists(temporary_path(path)));
  std::filesystem::remove_all(dir);
}

TEST(OutputFile, AFailedWriteIsAnOutputErrorNamingTheFile) {
  try {
    write_file_atomically("/proc/weakscale-no/table.csv", "x");
    ADD_FAILURE() << "a write under /proc succeeded";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/weakscale-no/table.csv"), std::string::npos) << e.what();
  }
  EXPECT_THROW(commit_file("/nonexistent-dir/x.csv"), OutputError);
}

// A device is written in place, never renamed over: /dev/full stays a device and its ENOSPC is
// reported; /dev/null takes the text.
TEST(OutputFile, ADeviceIsWrittenInPlaceAndChecked) {
  ASSERT_TRUE(std::filesystem::is_character_file("/dev/full"));
  try {
    write_file_atomically("/dev/full", std::string(1 << 16, 'x'));
    ADD_FAILURE() << "a write to /dev/full succeeded";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/full"));
  EXPECT_FALSE(std::filesystem::exists("/dev/full.tmp"));
  EXPECT_NO_THROW(write_file_atomically("/dev/null", "rows\n"));
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
  EXPECT_THROW(append_file_atomically("/dev/full", "h\n", std::string(1 << 16, 'x')), OutputError);
}

// Appending starts a missing or empty file with the header, keeps earlier rows, and puts a row
// after a file that lost its last newline on a line of its own.
TEST(OutputFile, AppendKeepsRowsAndWritesTheHeaderOnce) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "weakscale-append";
  std::filesystem::remove_all(dir);
  const auto path = dir / "runs.csv";
  append_file_atomically(path, "a,b\n", "1,2\n");
  append_file_atomically(path, "a,b\n", "3,4\n");
  EXPECT_EQ(read(path), "a,b\n1,2\n3,4\n");
  { std::ofstream(path, std::ios::trunc) << "a,b\n5,6"; }
  append_file_atomically(path, "a,b\n", "7,8\n");
  EXPECT_EQ(read(path), "a,b\n5,6\n7,8\n");
  { std::ofstream(path, std::ios::trunc); }
  append_file_atomically(path, "a,b\n", "9,9\n");
  EXPECT_EQ(read(path), "a,b\n9,9\n");
  EXPECT_FALSE(std::filesystem::exists(temporary_path(path)));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ws
