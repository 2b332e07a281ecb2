#include "sim/core/output_file.hpp"

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

}  // namespace
}  // namespace ws
