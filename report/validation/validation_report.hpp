// The files and the console summary of a validation (`weakscale validate`, local or --measured):
// validation.csv and .json, the error figures, and the figure.
#pragma once

#include <iosfwd>
#include <optional>
#include <vector>

#include "harness/validate/validate.hpp"
#include "harness/validate/validation_record.hpp"

namespace ws {

// "median |error| 3.1 % over 20 runs, worst 9.8 % (r07 ...): phase off most ..." lines.
void print_error_summary(const std::vector<ValidationRecord>& records, const std::optional<ErrorSummary>& errors,
                         std::ostream& out);

// Writes validation.csv and .json into options.out_dir, prints the error figures (and the
// file-as-written ones where host tracking gave them), draws the figure unless !options.plot, adds
// the files to report.files and names them in `log`. PlotError when gnuplot fails (CSV and JSON are
// written by then).
void write_validation_report(ValidationReport& report, const ValidateOptions& options, std::ostream& log);

}  // namespace ws
