#include "report/text_file.hpp"

#include <fmt/format.h>

#include "base/output_file.hpp"

namespace ws {

std::filesystem::path write_text_file(const std::filesystem::path& out_dir, const std::string& file_name,
                                      const std::string& text) {
  const std::filesystem::path path = out_dir / file_name;
  write_file_atomically(path, text);
  return path;
}

// Defined in the build directory's build_commit.cpp, written at every build.
std::string build_commit();

std::string program_version() { return fmt::format("{} {}", WEAKSCALE_VERSION, build_commit()); }

std::string program_release() { return WEAKSCALE_VERSION; }

std::string program_commit() { return build_commit(); }

}  // namespace ws
