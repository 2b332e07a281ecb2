#include "report/gnuplot.hpp"

// gnuplot-iostream is isolated here (and included as a system header) because its Boost-based
// code does not build warning-free under our flags.
#include <fmt/format.h>
#include <gnuplot-iostream.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "base/output_file.hpp"

namespace ws {
namespace {

void run_gnuplot(const std::filesystem::path& gnuplot, const std::string& script) {
  Gnuplot gp(fmt::format("'{}'", gnuplot.string()));
  gp << script << std::flush;
}  // ~Gnuplot waits for gnuplot to exit, so the files are complete after this returns.

// Whether a figure gnuplot wrote is whole: PNG's last chunk is IEND (then a 4-byte CRC), an SVG
// closes its root element.
bool figure_is_complete(const std::filesystem::path& temp, const std::filesystem::path& file) {
  std::ifstream in(temp, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (file.extension() == ".png") return text.size() >= 12 && text.compare(text.size() - 8, 4, "IEND") == 0;
  if (file.extension() == ".svg") return text.find("</svg>", text.size() > 64 ? text.size() - 64 : 0) != std::string::npos;
  return !text.empty();
}
}  // namespace

std::string gnuplot_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

std::string FigureFiles::set_output(const std::filesystem::path& file) {
  staged_.emplace_back(file);
  return "set output " + gnuplot_string(staged_.back().temporary().string()) + "\n";
}

std::vector<std::filesystem::path> FigureFiles::targets() const {
  std::vector<std::filesystem::path> out;
  for (const auto& s : staged_) out.push_back(s.target());
  return out;
}

std::vector<std::filesystem::path> render_gnuplot(const std::filesystem::path& gnuplot, const std::string& script,
                                                  FigureFiles& figures) {
  run_gnuplot(gnuplot, script);
  for (const StagedFile& figure : figures.staged()) {
    if (!figure_is_complete(figure.temporary(), figure.target())) {
      throw OutputError(fmt::format("{}: gnuplot did not write the figure completely (see its messages above; "
                                    "a full disk?)",
                                    figure.target().string()));
    }
  }
  for (StagedFile& figure : figures.staged()) figure.commit();
  return figures.targets();
}

std::optional<std::filesystem::path> find_gnuplot() {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::string_view dirs(path);
  while (!dirs.empty()) {
    const auto colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / "gnuplot";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

}  // namespace ws
