#include "base/output_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace ws {

std::filesystem::path temporary_path(const std::filesystem::path& path) {
  return std::filesystem::path(path.string() + ".tmp");
}

void commit_file(const std::filesystem::path& path) {
  const auto temp = temporary_path(path);
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    throw OutputError(fmt::format("{}: cannot move {} into place: {}", path.string(), temp.string(), ec.message()));
  }
}

namespace {

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

}  // namespace

bool is_special_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  return !ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
         !std::filesystem::is_directory(status);
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  // A device, pipe or socket (/dev/stdout, a FIFO) cannot be replaced by a rename, and must not
  // be: it is written in place, still checked.
  if (is_special_file(path)) {
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr)
      throw OutputError(fmt::format("{}: cannot open for writing: {}", path.string(), std::strerror(errno)));
    write_and_close(file, path, text, path);
    return;
  }
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec)
    throw OutputError(fmt::format("{}: cannot create the directory {}: {}", path.string(),
                                  path.parent_path().string(), ec.message()));
  const auto temp = temporary_path(path);
  std::FILE* file = std::fopen(temp.c_str(), "wb");
  if (file == nullptr)
    throw OutputError(fmt::format("{}: cannot create {}: {}", path.string(), temp.string(), std::strerror(errno)));
  write_and_close(file, path, text, temp);
  commit_file(path);
}

void append_file_atomically(const std::filesystem::path& path, std::string_view header, std::string_view text) {
  if (is_special_file(path)) {
    write_file_atomically(path, std::string(header) + std::string(text));
    return;
  }
  std::string content;
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) {
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr)
      throw OutputError(fmt::format("{}: cannot read the rows to append to: {}", path.string(), std::strerror(errno)));
    char buffer[1 << 16];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) content.append(buffer, n);
    const bool failed = std::ferror(file) != 0;
    std::fclose(file);
    if (failed) throw OutputError(fmt::format("{}: cannot read the rows to append to", path.string()));
  }
  // A file cut short by an editor or an old non-atomic writer still gets its row on a line of its own.
  if (!content.empty() && content.back() != '\n') content += '\n';
  if (content.empty()) content = header;
  content += text;
  write_file_atomically(path, content);
}

}  // namespace ws
