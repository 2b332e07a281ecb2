// Untrusted text (a flag's value, a file name, a parser's message that quotes them) as it appears
// in an error message: short and on one line, so that a value cannot flood the terminal, forge
// another line of output or send escape sequences to it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/input_file.hpp"

namespace ws {

// At most this many characters of a value are shown; the rest is cut and marked "...".
inline constexpr std::size_t kShownValueChars = 80;

// Untrusted text escaped and cut (base/input_file.hpp's printable), for the engine's messages.
inline std::string escape_for_message(std::string_view text, std::size_t max_chars = 300) {
  return printable(text, max_chars);
}

// A value as written in "--flag VALUE: problem": unchanged when it is non-empty printable ASCII
// of at most kShownValueChars characters (a path, a number), else in double quotes with escapes,
// so that an empty value and one with spaces at its ends are visible as such.
inline std::string quote_for_message(std::string_view text) {
  const bool plain = !text.empty() && text.size() <= kShownValueChars && text.front() != ' ' &&
                     text.back() != ' ' && escape_for_message(text, kShownValueChars) == text &&
                     text.find('"') == std::string_view::npos;
  if (plain) return std::string(text);
  std::string escaped;
  for (const char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return '"' + escape_for_message(escaped, kShownValueChars) + '"';
}

}  // namespace ws
