// Figures through gnuplot, checked: where gnuplot is, how a figure's output is set, how a script
// is run so that only complete figures replace the previous ones, and how text is quoted for it.
// Shared by the study, validation and published-collectives figures.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ws {

// gnuplot missing, or it did not produce a file. Not an input error: the tables are fine and
// already written when this is thrown.
class PlotError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The gnuplot executable on PATH, if any.
std::optional<std::filesystem::path> find_gnuplot();

// `text` as one of gnuplot's double-quoted strings.
std::string gnuplot_string(std::string_view text);

// "set output ...\n" for figure `file`: gnuplot writes to its temporary name (base/output_file),
// render_gnuplot moves it into place once complete.
std::string set_output(const std::filesystem::path& file);

// Runs `script` through gnuplot and checks that it wrote every one of `files` (the figures the
// script sets as outputs with set_output) completely: a missing, empty or truncated figure (a PNG
// without its IEND chunk, an SVG without </svg>, e.g. on a full disk) is an OutputError and the
// previous figure stays; complete ones are renamed into place.
void render_gnuplot(const std::filesystem::path& gnuplot, const std::string& script,
                    const std::vector<std::filesystem::path>& files);

}  // namespace ws
