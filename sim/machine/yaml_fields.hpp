// Reading a YAML document with errors that name file, line and dotted key: a node with its key
// (Field), maps whose keys are checked (MapField), and readers of scalars and quantities that
// reject anything else with what was expected. Used by the machine file loader's parts.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/quantity.hpp"
#include "base/units.hpp"

namespace ws::yaml_fields {

// yaml-cpp marks are 0-based; a node without a position (a missing key) has line -1.
int line_of(const YAML::Node& node);
std::string describe_value(const YAML::Node& node);
std::string join(const std::vector<std::string>& items);

// A YAML node together with the dotted key that leads to it, so every error can name both. `line`
// is that of the key where there is one: a block list or map starts on the line after its key.
struct Field {
  const std::string* file;
  YAML::Node node;
  std::string key;
  int line = 0;

  [[noreturn]] void fail(const std::string& value, const std::string& expected) const;
  [[noreturn]] void fail(const std::string& expected) const { fail(describe_value(node), expected); }

  std::string child_key(const std::string& name) const { return key.empty() ? name : key + "." + name; }
  Field child(const YAML::Node& n, const std::string& name, int key_line) const {
    return Field{file, n, child_key(name), key_line};
  }
  Field element(const YAML::Node& n, std::size_t index) const;
};

// A map whose keys are checked against an allowed list on construction.
class MapField {
 public:
  MapField(const Field& field, std::initializer_list<const char*> allowed);
  bool has(const std::string& name) const { return key_lines_.count(name) != 0; }
  // A missing key is reported at the line of the map that should hold it.
  Field required(const std::string& name) const;
  const Field& field() const { return field_; }

 private:
  Field field_;
  std::vector<std::string> allowed_;
  std::map<std::string, int> key_lines_;
};

std::string scalar(const Field& f, const std::string& what);
std::string read_string(const Field& f);
long long read_integer(const Field& f);
int read_int_at_least(const Field& f, int minimum);
// An integer in [minimum, maximum]; the message names both ends (a documented limit).
int read_int_in(const Field& f, int minimum, int maximum, std::string_view why_limit = {});
double read_number(const Field& f, const std::string& what);
double read_efficiency(const Field& f);       // (0, 1]
double read_positive_number(const Field& f);  // > 0
double read_fraction(const Field& f);         // [0, 1)
// "a bandwidth between 1 MB/s and 100 TB/s with a unit (one of: ...)".
std::string quantity_expected(std::string_view kind, std::string_view units, const PlausibleRange& range);
Bandwidth read_bandwidth(const Field& f);
Time read_latency(const Field& f);             // >= 0
// Sizes are whole bytes (a fractional input such as "1.5 B" rounds to the nearest byte).
Bytes read_capacity(const Field& f);          // size > 0
Bytes read_size_non_negative(const Field& f);
FlopRate read_flop_rate(const Field& f);
// Returns the list's elements; an empty list is rejected when `non_empty`.
std::vector<Field> read_list(const Field& f, const std::string& what, bool non_empty);
// The same with at most `max_items` entries, refused before any is read.
std::vector<Field> read_list(const Field& f, const std::string& what, bool non_empty, std::size_t max_items);

}  // namespace ws::yaml_fields
