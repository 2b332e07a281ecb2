// Writing output files so that a failure is never silent, never leaves a truncated file, and can
// never be redirected: the text goes to a new file created exclusively (O_EXCL, never through a
// link) with an unpredictable name in the target's directory, is checked and flushed, and only
// then renamed over PATH. A reader sees the previous file or the complete new one; a link planted
// at PATH is replaced, not followed. A failed write is an OutputError (the CLI's exit 4).
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

// Creates the parent directory if needed; throws OutputError, leaving no temporary behind. An
// existing device or FIFO is written in place (checked, not renamed over). A directory at PATH is
// refused with an error that says so.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

// Appends `text` to the file at `path` (starting it with `header` when it is missing or empty) by
// rewriting it atomically: a row is never half-written. Meant for run logs of modest size.
void append_file_atomically(const std::filesystem::path& path, std::string_view header, std::string_view text);

// True for an existing path that is neither a regular file nor a directory (a device such as
// /dev/stdout, a FIFO): such a target is written in place, since a rename would replace it.
bool is_special_file(const std::filesystem::path& path);

// A file being written for `target` by someone else (gnuplot, a checkpoint's stream): created
// empty and exclusively beside `target` on construction (mode 0666 less the umask), renamed over
// `target` by commit(), removed by the destructor when not committed. Not copyable: one owner.
class StagedFile {
 public:
  explicit StagedFile(std::filesystem::path target);
  StagedFile(StagedFile&& other) noexcept;
  StagedFile& operator=(StagedFile&&) = delete;
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;
  ~StagedFile();

  const std::filesystem::path& target() const { return target_; }
  // Where to write: a fresh name such as "dir/.table.csv.k3Jq9Z.tmp".
  const std::filesystem::path& temporary() const { return temporary_; }
  // Renames the temporary over the target; throws OutputError (and removes the temporary).
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temporary_;
  bool done_ = false;
};

// Throws OutputError when `path` could not be written as an output (its directory missing or not
// writable, or a directory at `path`): checked before the work that produces it, so that a typo
// does not cost the run. A device or FIFO at `path` is fine (written in place).
void check_output_path(const std::filesystem::path& path);

// One run at a time per output directory: an advisory lock (flock) on DIR/.weakscale.lock, held
// until destruction or the process's end (a killed run leaves no stale lock). Construction throws
// OutputError naming the other run (its pid and what it said it is) when one holds it. The
// directory is created when missing; an unwritable one is refused here, before any work.
class DirectoryLock {
 public:
  DirectoryLock(const std::filesystem::path& dir, std::string_view what_runs);
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  ~DirectoryLock();

 private:
  int fd_ = -1;
};

// Creates a new, private (0700) directory with an unpredictable name under `parent` (the system's
// temporary directory when empty) and returns it; throws OutputError. For scratch files that
// other users must not be able to guess or replace.
std::filesystem::path make_private_directory(std::string_view prefix, const std::filesystem::path& parent = {});

// A private directory (make_private_directory) for one operation's scratch files, removed with
// everything in it at the end of the scope.
class ScratchDirectory {
 public:
  explicit ScratchDirectory(std::string_view prefix) : path_(make_private_directory(prefix)) {}
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace ws
