// The exception for bad user input (machine files, study specs, command-line values). It carries
// where the problem is and what was expected; the CLI catches it once and prints one line.
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
  const InputLocation& where() const { return where_; }
  const std::string& value() const { return value_; }
  const std::string& expected() const { return expected_; }

 private:
  InputLocation where_;
  std::string value_;
  std::string expected_;
};

}  // namespace ws
