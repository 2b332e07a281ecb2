#include "base/input_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/input_error.hpp"

namespace ws {

namespace {

// Length of the UTF-8 sequence starting at text[i] and its code point; 0 when not valid UTF-8.
std::size_t utf8_sequence(std::string_view text, std::size_t i, char32_t& code) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  std::size_t length = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) length = 2, code = b0 & 0x1Fu;
  else if (b0 >= 0xE0 && b0 <= 0xEF) length = 3, code = b0 & 0x0Fu;
  else if (b0 >= 0xF0 && b0 <= 0xF4) length = 4, code = b0 & 0x07u;
  else return 0;
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0u) != 0x80u) return 0;
    code = (code << 6) | (byte(i + k) & 0x3Fu);
  }
  const char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < least[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

// Characters that reorder or hide the text around them on a terminal (Trojan Source).
bool is_format_control(char32_t c) {
  return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) || c == 0x200E || c == 0x200F ||
         c == 0x061C || (c >= 0x80 && c <= 0x9F);
}

}  // namespace

std::optional<std::string> read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes,
                                             std::string& text) {
  const auto limit = [&] {
    return max_bytes % (1ULL << 30) == 0 ? fmt::format("{} GiB", max_bytes >> 30) : fmt::format("{} MiB", max_bytes >> 20);
  };
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return fmt::format("cannot open the file: {}", std::strerror(errno));
  struct stat st {};
  const auto refuse = [&](std::string problem) {
    ::close(fd);
    return std::optional<std::string>(std::move(problem));
  };
  if (::fstat(fd, &st) != 0) return refuse(fmt::format("cannot open the file: {}", std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) return refuse("is a directory");
  if (!S_ISREG(st.st_mode)) return refuse("is not a regular file (a device, FIFO or socket)");
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    return refuse(fmt::format("is {} bytes, above the limit of {} for such a file", st.st_size, limit()));
  text.clear();
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return refuse(fmt::format("cannot read the file: {}", std::strerror(errno)));
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    // A file that grows while it is read (a log being written) still stops at the limit.
    if (text.size() > max_bytes) return refuse(fmt::format("grew above the limit of {} for such a file", limit()));
  }
  ::close(fd);
  return std::nullopt;
}

std::string read_input_file(const std::filesystem::path& path, std::string_view what, std::uint64_t max_bytes) {
  std::string text;
  if (const auto problem = read_regular_file(path, max_bytes, text))
    throw InputError(InputLocation{path.string(), 0, ""}, "", fmt::format("{} (it {})", what, *problem));
  return text;
}

std::string printable(std::string_view text, std::size_t max_chars) {
  std::string out;
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (chars == max_chars) {
      out += "...";
      break;
    }
    const auto b = static_cast<unsigned char>(text[i]);
    char32_t code = 0;
    if (b >= 0x20 && b < 0x7F) {
      out += static_cast<char>(b);
      ++i;
    } else if (const std::size_t n = b >= 0x80 ? utf8_sequence(text, i, code) : 0; n > 0) {
      if (is_format_control(code)) {
        out += fmt::format("\\u{{{:04X}}}", static_cast<unsigned>(code));
      } else {
        out.append(text.substr(i, n));
      }
      i += n;
    } else {
      out += fmt::format("\\x{:02X}", b);
      ++i;
    }
    ++chars;
  }
  return out;
}

}  // namespace ws
