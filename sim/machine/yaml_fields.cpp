// Field and quantity readers for the machine file loader.
#include "sim/machine/yaml_fields.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "base/input_error.hpp"
#include "base/quantity.hpp"

namespace ws::yaml_fields {

int line_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.line >= 0 ? mark.line + 1 : 0;
}

std::string describe_value(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar: return node.Scalar();
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Undefined: return "";
  }
  return "";
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

void Field::fail(const std::string& value, const std::string& expected) const {
  throw InputError(InputLocation{*file, line, key}, value, expected);
}

Field Field::element(const YAML::Node& n, std::size_t index) const {
  return Field{file, n, fmt::format("{}[{}]", key, index), line_of(n)};
}

MapField::MapField(const Field& field, std::initializer_list<const char*> allowed) : field_(field) {
  for (const char* name : allowed) allowed_.emplace_back(name);
  if (!field_.node.IsMap()) field_.fail(fmt::format("a map with keys: {}", join(allowed_)));
  for (const auto& entry : field_.node) {
    const std::string name = entry.first.Scalar();
    const Field key_field = field_.child(entry.first, name, line_of(entry.first));
    if (std::find(allowed_.begin(), allowed_.end(), name) == allowed_.end()) {
      key_field.fail(name, fmt::format("one of the keys: {}", join(allowed_)));
    }
    if (!key_lines_.emplace(name, key_field.line).second) key_field.fail(name, "each key at most once");
  }
}

Field MapField::required(const std::string& name) const {
  const auto it = key_lines_.find(name);
  if (it == key_lines_.end()) {
    field_.child(field_.node, name, field_.line).fail("", fmt::format("required key '{}' (missing)", name));
  }
  return field_.child(field_.node[name], name, it->second);
}

double read_fraction(const Field& f) {
  constexpr const char* kWhat = "a number in [0, 1) (plain, no unit)";
  const double value = read_number(f, kWhat);
  if (!(value >= 0.0 && value < 1.0)) f.fail(kWhat);
  return value;
}

std::string scalar(const Field& f, const std::string& what) {
  if (!f.node.IsScalar()) f.fail(what);
  return f.node.Scalar();
}

std::string read_string(const Field& f) {
  const std::string s = scalar(f, "a string");
  if (s.empty()) f.fail("a non-empty string");
  return s;
}

long long read_integer(const Field& f) {
  const std::string s = scalar(f, "an integer");
  long long value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) f.fail("an integer");
  return value;
}

int read_int_at_least(const Field& f, int minimum) {
  const long long value = read_integer(f);
  if (value < minimum || value > std::numeric_limits<int>::max()) {
    f.fail(fmt::format("an integer >= {}", minimum));
  }
  return static_cast<int>(value);
}

int read_int_in(const Field& f, int minimum, int maximum, std::string_view why_limit) {
  const long long value = read_integer(f);
  if (value < minimum || value > maximum) {
    f.fail(fmt::format("an integer from {} to {}{}{}", minimum, maximum, why_limit.empty() ? "" : " ", why_limit));
  }
  return static_cast<int>(value);
}

double read_number(const Field& f, const std::string& what) {
  const std::string s = scalar(f, what);
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !std::isfinite(value)) f.fail(what);
  return value;
}

double read_efficiency(const Field& f) {
  constexpr const char* kWhat = "a number in (0, 1] (plain, no unit)";
  const double value = read_number(f, kWhat);
  if (!(value > 0.0 && value <= 1.0)) f.fail(kWhat);
  return value;
}

double read_positive_number(const Field& f) {
  constexpr const char* kWhat = "a positive number (plain, no unit)";
  const double value = read_number(f, kWhat);
  if (!(value > 0.0)) f.fail(kWhat);
  return value;
}

std::string quantity_expected(std::string_view kind, std::string_view units, const PlausibleRange& range) {
  return fmt::format("{} {} with a unit (one of: {})", kind, range.text, units);
}

Bandwidth read_bandwidth(const Field& f) {
  const std::string expected = quantity_expected("a bandwidth", kBandwidthUnits, kBandwidthRange);
  const auto value = parse_bandwidth(scalar(f, expected));
  if (!value || !within(kBandwidthRange, value->bytes_per_s())) f.fail(expected);
  return *value;
}

Time read_latency(const Field& f) {
  const std::string expected = quantity_expected("a time", kTimeUnits, kLatencyRange);
  // A value past Time's range saturates in parse_time and fails the range check here.
  const auto value = parse_time(scalar(f, expected));
  if (!value || !within(kLatencyRange, value->seconds())) f.fail(expected);
  return *value;
}

Bytes read_capacity(const Field& f) {
  const std::string expected = quantity_expected("a size", kBytesUnits, kCapacityRange);
  const auto value = parse_bytes(scalar(f, expected));
  if (!value || !within(kCapacityRange, *value)) f.fail(expected);
  return static_cast<Bytes>(std::llround(*value));
}

Bytes read_size_non_negative(const Field& f) {
  const std::string expected = quantity_expected("a size", kBytesUnits, kSizeRange);
  const auto value = parse_bytes(scalar(f, expected));
  if (!value || !within(kSizeRange, *value)) f.fail(expected);
  return static_cast<Bytes>(std::llround(*value));
}

FlopRate read_flop_rate(const Field& f) {
  const std::string expected = quantity_expected("a compute rate", kFlopRateUnits, kFlopRateRange);
  const auto value = parse_flop_rate(scalar(f, expected));
  if (!value || !within(kFlopRateRange, value->flops())) f.fail(expected);
  return *value;
}

// Returns the list's elements; an empty list is rejected when `non_empty`.
std::vector<Field> read_list(const Field& f, const std::string& what, bool non_empty) {
  if (!f.node.IsSequence()) f.fail(fmt::format("a list of {}", what));
  if (non_empty && f.node.size() == 0) f.fail("[]", fmt::format("a non-empty list of {}", what));
  std::vector<Field> out;
  for (std::size_t i = 0; i < f.node.size(); ++i) out.push_back(f.element(f.node[i], i));
  return out;
}

std::vector<Field> read_list(const Field& f, const std::string& what, bool non_empty, std::size_t max_items) {
  if (f.node.IsSequence() && f.node.size() > max_items)
    f.fail(fmt::format("a list of {} entries", f.node.size()),
           fmt::format("a list of at most {} {} (the limit for one file)", max_items, what));
  return read_list(f, what, non_empty);
}

}  // namespace ws::yaml_fields
