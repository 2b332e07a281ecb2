// CSV cells for the project's result tables: RFC 4180 quoting, only where a cell needs it (a
// comma, a quote, a line break), so that ordinary rows stay plain and byte-stable.
#pragma once

#include <string>
#include <string_view>

namespace ws {

std::string csv_field(std::string_view text);

}  // namespace ws
