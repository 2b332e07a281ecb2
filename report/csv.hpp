// CSV cells for the project's result tables: RFC 4180 quoting, only where a cell needs it (a
// comma, a quote, a line break), so that ordinary rows stay plain and byte-stable; and the fields of
// one line read back the same way.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ws {

std::string csv_field(std::string_view text);

// The fields of one CSV line (without its '\n'): commas split outside quotes, a quoted field's
// doubled quote is one quote, and a trailing '\r' (a CRLF file) is dropped. "a,,b" has three fields.
std::vector<std::string> split_csv_line(std::string_view line);

}  // namespace ws
