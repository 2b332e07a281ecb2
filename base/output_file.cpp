#include "base/output_file.hpp"

#include "base/input_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

namespace ws {

namespace {

// The process's umask, read without changing it (umask(2) can only be read by setting it, which
// would race with files other threads create): mkstemp makes 0600 files, and an output should get
// the permissions an ordinary open would have given it.
mode_t process_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  }
  return 022;
}

// A new file beside `target`, created with O_EXCL (a planted link or file at that name makes it
// fail rather than be followed) under a name nobody can predict; returns its descriptor.
int create_beside(const std::filesystem::path& target, std::filesystem::path& temporary) {
  const auto dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  std::string leaf(".");
  leaf.append(target.filename().string()).append(".XXXXXX.tmp");
  std::string name = (dir / leaf).string();
  const int fd = ::mkstemps(name.data(), 4);
  if (fd < 0)
    throw OutputError(fmt::format("{}: cannot create a temporary file in {}: {}", target.string(), dir.string(),
                                  std::strerror(errno)));
  ::fchmod(fd, 0666 & ~process_umask());
  temporary = name;
  return fd;
}

void create_parent(const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec)
    throw OutputError(fmt::format("{}: cannot create the directory {}: {}", path.string(),
                                  path.parent_path().string(), ec.message()));
  if (std::filesystem::is_directory(path, ec))
    throw OutputError(fmt::format("{}: is a directory; give a file name", path.string()));
}

// Writes and closes `file`, reporting the errno that says why (ENOSPC, EPIPE): stdio rather than
// a stream, because fwrite and fclose keep the reason.
void write_and_close(std::FILE* file, const std::filesystem::path& path, std::string_view text,
                     const std::filesystem::path& written_path) {
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int write_errno = errno;
  const bool closed = std::fclose(file) == 0;  // flushes: a full disk often shows only here
  const int close_errno = errno;
  if (!written || !closed) {
    std::error_code ec;
    if (written_path != path) std::filesystem::remove(written_path, ec);
    throw OutputError(fmt::format("{}: writing {} bytes failed: {}", path.string(), text.size(),
                                  std::strerror(!written ? write_errno : close_errno)));
  }
}

// Opens an existing device, FIFO or socket at `path` for writing in place; -1 when `path` is
// missing or turns out to be a regular file (then it is replaced through a staged file, and is
// not truncated here: no O_CREAT, no O_TRUNC).
int open_special(const std::filesystem::path& path) {
  if (!is_special_file(path)) return -1;
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENXIO) throw OutputError(fmt::format("{}: a FIFO with no reader", path.string()));
    throw OutputError(fmt::format("{}: cannot open for writing: {}", path.string(), std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
    ::close(fd);
    return -1;
  }
  // Back to blocking writes: O_NONBLOCK only kept the open of a reader-less FIFO from hanging.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

}  // namespace

StagedFile::StagedFile(std::filesystem::path target) : target_(std::move(target)) {
  create_parent(target_);
  ::close(create_beside(target_, temporary_));
}

StagedFile::StagedFile(StagedFile&& other) noexcept
    : target_(std::move(other.target_)), temporary_(std::move(other.temporary_)), done_(other.done_) {
  other.done_ = true;
}

StagedFile::~StagedFile() {
  if (done_) return;
  std::error_code ec;
  std::filesystem::remove(temporary_, ec);
}

void StagedFile::commit() {
  std::error_code ec;
  std::filesystem::rename(temporary_, target_, ec);
  done_ = true;
  if (ec) {
    std::filesystem::remove(temporary_, ec);
    throw OutputError(fmt::format("{}: cannot move the finished file into place: {}", target_.string(), ec.message()));
  }
}

bool is_special_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  return !ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
         !std::filesystem::is_directory(status);
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  // A device, pipe or socket (/dev/stdout, a FIFO) cannot be replaced by a rename, and must not
  // be: it is written in place, still checked.
  if (const int fd = open_special(path); fd >= 0) {
    std::FILE* file = ::fdopen(fd, "wb");
    if (file == nullptr) {
      ::close(fd);
      throw OutputError(fmt::format("{}: cannot open for writing: {}", path.string(), std::strerror(errno)));
    }
    write_and_close(file, path, text, path);
    return;
  }
  create_parent(path);
  std::filesystem::path temp;
  const int fd = create_beside(path, temp);
  std::FILE* file = ::fdopen(fd, "wb");
  if (file == nullptr) {
    ::close(fd);
    std::error_code ec;
    std::filesystem::remove(temp, ec);
    throw OutputError(fmt::format("{}: cannot open {}: {}", path.string(), temp.string(), std::strerror(errno)));
  }
  write_and_close(file, path, text, temp);
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    throw OutputError(fmt::format("{}: cannot move the finished file into place: {}", path.string(), ec.message()));
  }
}

void append_file_atomically(const std::filesystem::path& path, std::string_view header, std::string_view text) {
  if (is_special_file(path)) {
    write_file_atomically(path, std::string(header) + std::string(text));
    return;
  }
  std::string content;
  // The rows appended to are read without following a link: a link planted at PATH is replaced
  // by the new file, and what it pointed to is neither read nor written.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd >= 0) {
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      char buffer[1 << 16];
      ssize_t n = 0;
      while ((n = ::read(fd, buffer, sizeof buffer)) > 0) content.append(buffer, static_cast<std::size_t>(n));
      if (n < 0) {
        const int read_errno = errno;
        ::close(fd);
        throw OutputError(fmt::format("{}: cannot read the rows to append to: {}", path.string(), std::strerror(read_errno)));
      }
    }
    ::close(fd);
  } else if (errno != ENOENT && errno != ELOOP) {
    throw OutputError(fmt::format("{}: cannot read the rows to append to: {}", path.string(), std::strerror(errno)));
  }
  // Rows under another header would be read as the wrong columns: such a file is not appended to.
  if (!content.empty() && !header.empty() && !content.starts_with(header.substr(0, header.find('\n'))))
    throw OutputError(fmt::format("{}: its first line is not this program's header ({}...); give a new file",
                                  path.string(), header.substr(0, std::min<std::size_t>(header.find(','), 40))));
  // A file cut short by an editor or an old non-atomic writer still gets its row on a line of its own.
  if (!content.empty() && content.back() != '\n') content += '\n';
  if (content.empty()) content = header;
  content += text;
  write_file_atomically(path, content);
}

void check_output_path(const std::filesystem::path& path) {
  if (is_special_file(path)) return;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw OutputError(fmt::format("{}: is a directory; give a file name", path.string()));
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(dir, ec))
    throw OutputError(fmt::format("{}: cannot be written: {} is not a directory", path.string(), dir.string()));
  if (::access(dir.c_str(), W_OK) != 0)
    throw OutputError(fmt::format("{}: cannot be written: {}: {}", path.string(), dir.string(), std::strerror(errno)));
}

DirectoryLock::DirectoryLock(const std::filesystem::path& dir, std::string_view what_runs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw OutputError(fmt::format("{}: cannot create the directory: {}", dir.string(), ec.message()));
  if (::access(dir.c_str(), W_OK) != 0)
    throw OutputError(fmt::format("{}: cannot write there: {}", dir.string(), std::strerror(errno)));
  const auto path = dir / ".weakscale.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd_ < 0)
    throw OutputError(fmt::format("{}: cannot open the lock {}: {}", dir.string(), path.string(), std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw OutputError(fmt::format("{}: the lock {} is not a regular file", dir.string(), path.string()));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    char holder[512] = {};
    const ssize_t n = ::pread(fd_, holder, sizeof holder - 1, 0);
    std::string who(holder, n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
    ::close(fd_);
    fd_ = -1;
    if (e != EWOULDBLOCK)
      throw OutputError(fmt::format("{}: cannot lock {}: {}", dir.string(), path.string(), std::strerror(e)));
    throw OutputError(fmt::format("{}: another weakscale run is writing there ({}); wait for it to end or give "
                                  "another output directory",
                                  dir.string(), who.empty() ? std::string("unknown") : printable(who, 200)));
  }
  const std::string me = fmt::format("pid {}: {}", ::getpid(), what_runs);
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    // The lock holds without its note; a second run then says "unknown".
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock; the file stays, so no run can race its removal
}

std::filesystem::path make_private_directory(std::string_view prefix, const std::filesystem::path& parent) {
  std::error_code ec;
  const auto base = parent.empty() ? std::filesystem::temp_directory_path(ec) : parent;
  if (ec) throw OutputError(fmt::format("no temporary directory: {}", ec.message()));
  std::string name = (base / (std::string(prefix) + "-XXXXXX")).string();
  if (::mkdtemp(name.data()) == nullptr)
    throw OutputError(fmt::format("cannot create a private directory in {}: {}", base.string(), std::strerror(errno)));
  return name;
}

}  // namespace ws
