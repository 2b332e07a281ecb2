// Checks on option text that CLI11's conversions would let through: an unsigned option given a
// negative number wraps to a huge value (--seed -1 read as 18446744073709551615).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace ws::cli {

inline CLI::Validator non_negative_integer_text() {
  return CLI::Validator(
      [](std::string& text) {
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        return digits ? std::string() : "expected a non-negative integer (0 to 18446744073709551615), got '" + text + "'";
      },
      "NONNEGATIVE", "non-negative integer");
}

}  // namespace ws::cli
