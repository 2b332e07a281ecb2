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

std::size_t entries(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
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
  EXPECT_EQ(entries(path.parent_path()), 1U);
  std::filesystem::remove_all(dir);
}

TEST(OutputFile, AFailedWriteIsAnOutputErrorNamingTheFile) {
  try {
    write_file_atomically("/proc/weakscale-no/table.csv", "x");
    ADD_FAILURE() << "a write under /proc succeeded";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/weakscale-no/table.csv"), std::string::npos) << e.what();
  }
  EXPECT_THROW(StagedFile("/proc/weakscale-no/x.csv"), OutputError);
  try {
    write_file_atomically(::testing::TempDir(), "x");
    ADD_FAILURE() << "a directory was written over";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
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
  EXPECT_EQ(entries(dir), 1U);
  // Rows under another program's header are not appended to.
  { std::ofstream(path, std::ios::trunc) << "x,y\n1,2\n"; }
  EXPECT_THROW(append_file_atomically(path, "a,b\n", "3,4\n"), OutputError);
  EXPECT_EQ(read(path), "x,y\n1,2\n");
  std::filesystem::remove_all(dir);
}

// A link planted where the output or any temporary name would go is never followed: the victim it
// points to keeps its bytes, the output becomes a regular file of its own, and the temporary's
// name cannot be guessed (two stagings of one target never share it).
TEST(OutputFile, PlantedLinksAreReplacedNotFollowed) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "weakscale-links";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto victim = dir / "victim";
  { std::ofstream(victim) << "precious\n"; }
  const auto out = dir / "out.csv";
  for (const char* name : {"out.csv.tmp", ".out.csv.tmp", "out.csv"}) std::filesystem::create_symlink(victim, dir / name);
  write_file_atomically(out, "rows\n");
  EXPECT_EQ(read(victim), "precious\n");
  EXPECT_FALSE(std::filesystem::is_symlink(out));
  EXPECT_EQ(read(out), "rows\n");
  std::filesystem::remove(out);
  std::filesystem::create_symlink(victim, out);
  append_file_atomically(out, "rows\n", "1\n");
  EXPECT_EQ(read(victim), "precious\n");
  EXPECT_FALSE(std::filesystem::is_symlink(out));
  EXPECT_EQ(read(out), "rows\n1\n");
  StagedFile a(out), b(out);
  EXPECT_NE(a.temporary(), b.temporary());
  EXPECT_EQ(a.temporary().parent_path(), out.parent_path());
  std::filesystem::remove_all(dir);
}

// A staged file not committed leaves nothing; committed, it replaces the target.
TEST(OutputFile, StagedFileIsRemovedUnlessCommitted) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "weakscale-staged";
  std::filesystem::remove_all(dir);
  std::filesystem::path temp;
  {
    StagedFile staged(dir / "fig.png");
    temp = staged.temporary();
    EXPECT_TRUE(std::filesystem::is_regular_file(temp));
  }
  EXPECT_FALSE(std::filesystem::exists(temp));
  {
    StagedFile staged(dir / "fig.png");
    { std::ofstream(staged.temporary()) << "png"; }
    staged.commit();
  }
  EXPECT_EQ(read(dir / "fig.png"), "png");
  EXPECT_EQ(entries(dir), 1U);
  const auto scratch = make_private_directory("weakscale-test", dir);
  EXPECT_EQ(std::filesystem::status(scratch).permissions() & std::filesystem::perms::all, std::filesystem::perms::owner_all);
  EXPECT_NE(scratch, make_private_directory("weakscale-test", dir));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ws
