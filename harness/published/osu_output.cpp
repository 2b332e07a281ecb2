// Reading osu_bw stdout (OSU micro-benchmarks: title, '# Size  Bandwidth (MB/s)' header, one row
// per size, optionally a Validation column).
#include "harness/published/osu_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "base/input_error.hpp"
#include "base/quantity.hpp"

namespace ws {
namespace {

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

const char* kBandwidthTitle = "osu_bw output: the title '# OSU MPI Bandwidth Test ...'";

}  // namespace

std::vector<PublishedCollective> parse_osu_output(std::string_view text, const std::filesystem::path& file,
                                                  const BenchmarkJob& job) {
  require_identity(job, file, "OSU output");
  const std::string name = file.string();
  if (!job.op.empty() && job.op != "point-to-point") {
    throw InputError(
        InputLocation{name, 0, "--op"}, job.op,
        "no --op, or point-to-point: osu_bw measures a point-to-point stream (the file and the command "
        "line disagree)");
  }
  // The model runs osu_bw's two ranks on device 0 of two nodes; the output cannot say where they ran.
  if (job.nodes != 2) {
    throw InputError(
        InputLocation{name, 0, "--nodes"}, job.nodes == 0 ? "" : std::to_string(job.nodes),
        "--nodes 2 on the command line (osu_bw's two ranks on two nodes; its output does not say where "
        "they ran)");
  }
  if (job.ranks_per_node != 0 && job.ranks_per_node != 1) {
    throw InputError(InputLocation{name, 0, "--ranks-per-node"}, std::to_string(job.ranks_per_node),
                     "no --ranks-per-node, or 1 (osu_bw runs one rank on each of two nodes)");
  }
  int title_line = 0, header_line = 0, number = 0;
  bool validation = false;
  std::string title;
  std::vector<PublishedCollective> rows;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    const bool cut = end == std::string_view::npos;
    if (cut) end = text.size();
    const std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++number;
    const InputLocation at{name, number, ""};
    const auto words = split_words(line);
    if (words.empty()) continue;
    if (line.rfind("# OSU ", 0) == 0) {
      if (title_line != 0) {
        throw InputError(at, std::string(line),
                         fmt::format("one OSU run per file (a run began on line {})", title_line));
      }
      // Bi-directional and multi-pair tests move more than one stream; the model prices one.
      if (!contains(line, " Bandwidth Test") || contains(line, "Bi-Directional") ||
          contains(line, "Multiple")) {
        throw InputError(at, std::string(line), kBandwidthTitle);
      }
      title_line = number;
      title = std::string(line.substr(2));
      continue;
    }
    if (words[0] == "#") {
      if (words.size() > 1 && words[1] == "Size") {
        if (!contains(line, "Bandwidth (MB/s)")) {
          throw InputError(at, std::string(line), "the osu_bw column header '# Size  Bandwidth (MB/s)'");
        }
        header_line = number;
        validation = contains(line, "Validation");
      }
      continue;
    }
    // Rows start with a size; MPI launchers' warnings before or between them do not.
    if (header_line == 0 || !parse_unsigned(words[0])) continue;
    const std::size_t columns = validation ? 3 : 2;
    if (words.size() != columns) {
      throw InputError(
          at, std::string(line),
          fmt::format("{} columns as the column header on line {} names (size, MB/s{}); the row has "
                      "{}{}",
                      columns, header_line, validation ? ", validation" : "", words.size(),
                      cut ? " and the file ends inside it (cut short?)" : ""));
    }
    if (validation && words[2] != "Pass") {
      throw InputError(InputLocation{name, number, "Validation"}, std::string(words[2]),
                       "Pass (the run received wrong data: its bandwidth is not a measurement)");
    }
    const auto size = parse_unsigned(words[0]);
    if (*size == 0 || *size > static_cast<unsigned long long>(kSizeRange.high)) {
      throw InputError(InputLocation{name, number, "Size"}, std::string(words[0]),
                       "a size in bytes, 1 B to 1 PiB");
    }
    const auto mbps = parse_number(words[1]);
    // OSU's MB is 10^6 bytes: osu_bw divides the bytes it moved by 1e6.
    if (!mbps || !within(kBandwidthRange, *mbps * 1e6)) {
      throw InputError(InputLocation{name, number, "Bandwidth (MB/s)"}, std::string(words[1]),
                       fmt::format("a bandwidth in MB/s, {}", kBandwidthRange.text));
    }
    PublishedCollective row;
    row.machine = job.machine;
    row.library = job.library;
    row.op = "point-to-point";
    row.nodes = 2;
    row.devices = 2;
    row.bytes = static_cast<Bytes>(*size);
    row.busbw_gbps = *mbps / 1000;
    row.source = fmt::format("{} ({})", title, file.filename().string());
    row.file = name;
    row.line = number;
    rows.push_back(std::move(row));
  }
  if (title_line == 0) throw InputError(InputLocation{name, 0, ""}, "", kBandwidthTitle);
  if (header_line == 0) {
    throw InputError(InputLocation{name, 0, ""}, "", "the osu_bw column header '# Size  Bandwidth (MB/s)'");
  }
  if (rows.empty()) throw InputError(InputLocation{name, 0, ""}, "", "at least one row");
  return rows;
}

}  // namespace ws
