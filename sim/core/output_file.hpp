// Writing output files so that a failure is never silent and never leaves a truncated file: the
// text goes to PATH.tmp, is checked and flushed, and only then renamed over PATH. A reader sees
// the previous file or the complete new one. A failed write is an OutputError (the CLI's exit 4).
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string_view>

namespace ws {

// An output that could not be written completely (full disk, unwritable directory, closed
// stdout). Its message names the file and the reason.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Creates the parent directory if needed; throws OutputError, leaving no PATH.tmp behind.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

// The temporary name write_file_atomically uses, for files another program writes (gnuplot):
// write there, check, then commit_file().
std::filesystem::path temporary_path(const std::filesystem::path& path);
// Renames temporary_path(path) over `path`; throws OutputError (and removes the temporary).
void commit_file(const std::filesystem::path& path);

}  // namespace ws
