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

// Creates the parent directory if needed; throws OutputError, leaving no PATH.tmp behind. An
// existing device or FIFO is written in place (checked, not renamed over).
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

// Appends `text` to the file at `path` (starting it with `header` when it is missing or empty) by
// rewriting it atomically: a row is never half-written. Meant for run logs of modest size.
void append_file_atomically(const std::filesystem::path& path, std::string_view header, std::string_view text);

// True for an existing path that is neither a regular file nor a directory (a device such as
// /dev/stdout, a FIFO): such a target is written in place, since a rename would replace it.
bool is_special_file(const std::filesystem::path& path);

// The temporary name write_file_atomically uses, for files another program writes (gnuplot):
// write there, check, then commit_file().
std::filesystem::path temporary_path(const std::filesystem::path& path);
// Renames temporary_path(path) over `path`; throws OutputError (and removes the temporary).
void commit_file(const std::filesystem::path& path);

}  // namespace ws
