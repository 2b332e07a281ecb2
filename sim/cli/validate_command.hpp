// `weakscale validate`: the arguments as parsed; the work is done by sim/validate.
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>

#include "sim/validate/validate.hpp"

namespace ws::cli {

CLI::App* add_validate_command(CLI::App& app, ValidateOptions& options);
void run_validate_command(ValidateOptions options, std::ostream& out);

}  // namespace ws::cli
