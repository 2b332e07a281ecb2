#include "sim/core/output_file.hpp"

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

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec)
    throw OutputError(fmt::format("{}: cannot create the directory {}: {}", path.string(),
                                  path.parent_path().string(), ec.message()));
  const auto temp = temporary_path(path);
  // stdio rather than a stream: fwrite and fclose report the errno that says why (ENOSPC).
  std::FILE* file = std::fopen(temp.c_str(), "wb");
  if (file == nullptr)
    throw OutputError(fmt::format("{}: cannot create {}: {}", path.string(), temp.string(), std::strerror(errno)));
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int write_errno = errno;
  const bool closed = std::fclose(file) == 0;  // flushes: a full disk often shows only here
  const int close_errno = errno;
  if (!written || !closed) {
    std::filesystem::remove(temp, ec);
    throw OutputError(fmt::format("{}: writing {} bytes failed: {}", path.string(), text.size(),
                                  std::strerror(!written ? write_errno : close_errno)));
  }
  commit_file(path);
}

}  // namespace ws
