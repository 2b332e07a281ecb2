// Result files and what made them: text written atomically into an output directory, and the
// program version and commit that results record.
#pragma once

#include <filesystem>
#include <string>

namespace ws {

// Creates out_dir and writes `text` to out_dir/file_name atomically (base/output_file.hpp);
// returns the path written. OutputError if that is impossible.
std::filesystem::path write_text_file(const std::filesystem::path& out_dir, const std::string& file_name,
                                      const std::string& text);

// "0.1.0 <git commit>": what built this program (study results, resume records and validation
// reports carry it). The commit is read at every build, "-dirty" when tracked files outside
// results/ differ from it.
std::string program_version();
// Its parts: the release ("0.1.0") and the commit ("" outside a git checkout).
std::string program_release();
std::string program_commit();

}  // namespace ws
