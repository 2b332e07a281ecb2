// The validation figure through gnuplot (PNG and SVG): simulated vs measured step time with the
// y = x line; per run the measured and simulated step split into compute and exposed
// communication per group (stacked bars side by side); compute per kind of op over all runs.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/validate/validation_record.hpp"

namespace ws {

// The gnuplot commands (terminal and output excluded), for inspection and tests. Only records
// with a simulation are drawn; empty when there is none.
std::string validation_plot_script(const std::vector<ValidationRecord>& records, const std::string& machine_name);

// Writes <out_dir>/validation.png and .svg and returns them; PlotError (report/gnuplot.hpp)
// when gnuplot is missing or writes nothing.
std::vector<std::filesystem::path> plot_validation(const std::vector<ValidationRecord>& records,
                                                   const std::string& machine_name,
                                                   const std::filesystem::path& out_dir);

}  // namespace ws
