#include "base/input_error.hpp"

#include <fmt/format.h>

#include "base/input_file.hpp"

namespace ws {
namespace {
std::string describe(const InputLocation& w, const std::string& value, const std::string& expected) {
  // Names and values come from the user's files and command line: shown escaped and short, so a
  // control character cannot rewrite the terminal and a huge value cannot flood the log.
  std::string where = w.file.empty() ? std::string("command line") : printable(w.file, 200);
  if (w.line > 0) where += fmt::format(":{}", w.line);
  std::string what = w.key.empty() ? std::string() : fmt::format(" key '{}'", printable(w.key, 120));
  std::string got = value.empty() ? std::string() : fmt::format(", got '{}'", printable(value));
  return fmt::format("{}:{}: expected {}{}", where, what, expected, got);
}
}  // namespace

InputError::InputError(InputLocation where, std::string value, std::string expected)
    : std::runtime_error(describe(where, value, expected)),
      where_(std::move(where)),
      value_(std::move(value)),
      expected_(std::move(expected)) {}

InputError::InputError(const std::string& message) : std::runtime_error(message) {}

}  // namespace ws
