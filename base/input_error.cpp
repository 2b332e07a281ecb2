#include "base/input_error.hpp"

#include <fmt/format.h>

namespace ws {
namespace {
std::string describe(const InputLocation& w, const std::string& value, const std::string& expected) {
  std::string where = w.file.empty() ? std::string("command line") : w.file;
  if (w.line > 0) where += fmt::format(":{}", w.line);
  std::string what = w.key.empty() ? std::string() : fmt::format(" key '{}'", w.key);
  std::string got = value.empty() ? std::string() : fmt::format(", got '{}'", value);
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
