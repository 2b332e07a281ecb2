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

#include "base/output_file.hpp"

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

// The figures one gnuplot script writes. Each is staged (base/output_file: a new file with an
// unpredictable name beside it, so gnuplot never writes through a planted link) until
// render_gnuplot has checked it; figures never rendered leave nothing behind.
class FigureFiles {
 public:
  // "set output ...\n" for figure `file`: gnuplot writes to its staged name.
  std::string set_output(const std::filesystem::path& file);
  std::vector<std::filesystem::path> targets() const;
  std::vector<StagedFile>& staged() { return staged_; }

 private:
  std::vector<StagedFile> staged_;
};

// Runs `script` through gnuplot and checks that it wrote every one of `figures` completely: a
// missing, empty or truncated figure (a PNG without its IEND chunk, an SVG without </svg>, e.g. on
// a full disk) is an OutputError and the previous figure stays; complete ones are renamed into
// place. Returns the figures' paths.
std::vector<std::filesystem::path> render_gnuplot(const std::filesystem::path& gnuplot, const std::string& script,
                                                  FigureFiles& figures);

}  // namespace ws
