// Format detection and dispatch for measured collective bandwidths.
#include "harness/published/measurement_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "base/input_error.hpp"
#include "base/input_file.hpp"
#include "harness/published/nccl_tests_output.hpp"
#include "harness/published/osu_output.hpp"

namespace ws {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// A value of a CSV row the command line also gives: they must agree.
void check_agrees(const PublishedCollective& row, const char* column, const std::string& in_row,
                  const std::string& flag, const std::string& on_command_line) {
  if (on_command_line.empty() || in_row == on_command_line) return;
  throw InputError(InputLocation{row.file, row.line, column}, in_row,
                   fmt::format("{} {} as on the command line (the file and the command line disagree)", flag,
                               on_command_line));
}

}  // namespace

std::optional<MeasurementFormat> parse_measurement_format(std::string_view name) {
  if (name == "csv") return MeasurementFormat::csv;
  if (name == "nccl-tests") return MeasurementFormat::nccl_tests;
  if (name == "osu") return MeasurementFormat::osu;
  return std::nullopt;
}

MeasurementFormat detect_measurement_format(std::string_view text, const std::filesystem::path& file) {
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    // Our table may open with '#' comments, nccl-tests with NCCL's log lines: the first line that
    // only one format prints decides.
    if (starts_with(line, "machine,library,op,")) return MeasurementFormat::csv;
    if (starts_with(line, "# OSU ")) return MeasurementFormat::osu;
    if (starts_with(line, "# nThread ") || starts_with(line, "# Collective test starting:") ||
        starts_with(line, "# nccl-tests version") || starts_with(line, "rccl-tests: Version")) {
      return MeasurementFormat::nccl_tests;
    }
  }
  throw InputError(
      InputLocation{file.string(), 0, ""}, "",
      "a published-collectives CSV (header machine,library,op,...), nccl-tests or rccl-tests output "
      "('# nThread ...' header) or OSU output ('# OSU ...' title); or name it with --format");
}

std::vector<PublishedCollective> load_measurements(const std::filesystem::path& file,
                                                   std::optional<MeasurementFormat> format,
                                                   const BenchmarkJob& job) {
  const std::string text = read_input_file(
      file, "a readable file of measured collectives (CSV, nccl-tests or OSU output)", kMaxTableFileBytes);
  const MeasurementFormat f = format ? *format : detect_measurement_format(text, file);
  if (f == MeasurementFormat::nccl_tests) return parse_nccl_tests_output(text, file, job);
  if (f == MeasurementFormat::osu) return parse_osu_output(text, file, job);
  std::istringstream in(text);
  auto rows = parse_published_collectives(in, file);
  for (const auto& row : rows) {
    check_agrees(row, "machine", row.machine, "--machine", job.machine);
    check_agrees(row, "library", row.library, "--library", job.library);
    check_agrees(row, "op", row.op, "--op", job.op);
    check_agrees(row, "nodes", std::to_string(row.nodes), "--nodes",
                 job.nodes ? std::to_string(job.nodes) : "");
    if (job.ranks_per_node > 0 && row.devices != row.nodes * job.ranks_per_node) {
      throw InputError(
          InputLocation{row.file, row.line, "devices"}, std::to_string(row.devices),
          fmt::format("nodes x --ranks-per-node = {} x {} (the file and the command line disagree)",
                      row.nodes, job.ranks_per_node));
    }
  }
  return rows;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

std::optional<double> parse_number(std::string_view word) {
  if (word.empty()) return std::nullopt;
  const std::string s(word);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE) return std::nullopt;
  return v;
}

std::optional<unsigned long long> parse_unsigned(std::string_view word) {
  if (word.empty() || word.size() > 19) return std::nullopt;
  unsigned long long v = 0;
  for (const char c : word) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned long long>(c - '0');
  }
  return v;
}

void require_identity(const BenchmarkJob& job, const std::filesystem::path& file, std::string_view format) {
  if (job.machine.empty()) {
    throw InputError(
        InputLocation{file.string(), 0, "--machine"}, "",
        fmt::format("--machine NAME on the command line ({} does not name the machine)", format));
  }
  if (job.library.empty()) {
    throw InputError(
        InputLocation{file.string(), 0, "--library"}, "",
        fmt::format("--library NAME on the command line ({} does not name the library)", format));
  }
}

}  // namespace ws
