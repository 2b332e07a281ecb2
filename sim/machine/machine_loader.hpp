// Loads and validates a machine file (machines/*.yaml). Every problem - unknown or missing key,
// wrong type, missing or wrong unit, impossible value - throws InputError naming file, line, key
// and what was expected. A Machine that comes out of here is internally consistent.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "base/input_error.hpp"
#include "sim/machine/machine.hpp"

namespace ws {

// Parses YAML text; `file` is only used in error messages.
Machine parse_machine(const std::string& yaml_text, const std::string& file);

// Reads and parses a file.
Machine load_machine(const std::string& path);

// The file a machine name or path names: a path to a .yaml file as given, or a bare machine name
// ("frontier") as <machines_dir>/<name>.yaml; throws InputError listing the machines that exist for
// an unknown name.
std::filesystem::path machine_file_path(std::string_view name_or_path, const std::string& machines_dir);

// `name_or_path` is either a path to a .yaml file or a bare machine name ("frontier") looked up
// as <machines_dir>/<name>.yaml. Unknown names list the machines that exist.
Machine load_machine_by_name(std::string_view name_or_path, const std::string& machines_dir);

// `machine` with its collective library `name` as the default (use_collective_library): how a
// command line or a study spec picks one. Throws InputError at `where`, listing the machine's
// libraries, when it has none of that name.
Machine with_collective_library(Machine machine, const std::string& name, const InputLocation& where);

// A command line's "NAME=VALUE" for one of the machine's uncertain parameters (the names of
// `uncertainty:` ranges, e.g. "gemm_efficiency_scale=0.8", "collective_step_latency=40 us"),
// checked as an end of such a range is (a fraction in [0, 1), a latency with its unit, ...): the
// value as a range with low = high. Throws InputError (key "--set" or "--set NAME") otherwise.
UncertaintyRange parse_parameter_setting(const Machine& machine, const std::string& setting);

}  // namespace ws
