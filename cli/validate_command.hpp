// `weakscale validate`: the arguments as parsed; the work is done by harness/validate.
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>

#include "harness/validate/validate.hpp"

namespace ws::cli {

// `netns_rate` receives --netns-rate's text, parsed (with its error) when the command runs.
CLI::App* add_validate_command(CLI::App& app, ValidateOptions& options, std::string& netns_rate);
// `repeat_given`: --repeat was on the command line (else --quick runs each configuration once).
void run_validate_command(ValidateOptions options, const std::string& netns_rate, bool repeat_given,
                          std::ostream& out);

}  // namespace ws::cli
