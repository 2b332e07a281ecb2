// The exception for bad user input (machine files, study specs, command-line values, the engine's
// flags and data). It carries where the problem is and what was expected; weakscale and
// weakscale-engine catch it once and print one line (exit 2).
#pragma once

#include <stdexcept>
#include <string>

namespace ws {

struct InputLocation {
  std::string file;  // path as given by the user; empty for command-line values
  int line = 0;      // 1-based; 0 when unknown
  std::string key;   // dotted path, e.g. "dragonfly.global_links_per_group_pair"
};

class InputError : public std::runtime_error {
 public:
  InputError(InputLocation where, std::string value, std::string expected);
  // A message that already names the flag or file and what is allowed ("--hidden 64 is not
  // divisible by --heads 5").
  explicit InputError(const std::string& message);
  const InputLocation& where() const { return where_; }
  const std::string& value() const { return value_; }
  const std::string& expected() const { return expected_; }

 private:
  InputLocation where_;
  std::string value_;
  std::string expected_;
};

}  // namespace ws
