// Reading the published-collectives table.
#include "harness/published/published_table.hpp"

#include "report/csv.hpp"

#include <sstream>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "workload/collective_op.hpp"
#include "base/input_error.hpp"
#include "base/quantity.hpp"
#include "base/input_file.hpp"

namespace ws {

bool same_job(const PublishedCollective& a, const PublishedCollective& b) {
  return a.machine == b.machine && a.library == b.library && a.nodes == b.nodes && a.devices == b.devices &&
         a.bytes == b.bytes;
}

bool alike(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }
namespace {

constexpr const char* kColumns[] = {"machine", "library", "op", "nodes", "devices", "bytes", "busbw_gbps", "source"};
constexpr std::size_t kColumnCount = std::size(kColumns);

std::optional<CollectiveOp> parse_op(const std::string& s) {
  for (const auto op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
    if (s == to_string(op)) return op;
  }
  return std::nullopt;
}

int parse_count(const std::string& text, const InputLocation& where) {
  std::size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || v < 1) throw InputError(where, text, "an integer >= 1");
  return v;
}

}  // namespace

std::vector<PublishedCollective> load_published_collectives(const std::filesystem::path& file) {
  std::istringstream in(read_input_file(file, "a readable CSV file of published collectives", kMaxTableFileBytes));
  return parse_published_collectives(in, file);
}

std::vector<PublishedCollective> parse_published_collectives(std::istream& in, const std::filesystem::path& file) {
  std::vector<PublishedCollective> rows;
  std::string line;
  int number = 0;
  bool header = true;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    const auto f = split_csv_line(line);
    const InputLocation at{file.string(), number, ""};
    if (header) {
      std::string expected;
      for (const char* c : kColumns) {
        if (!expected.empty()) expected += ',';
        expected += c;
      }
      if (line != expected) throw InputError(at, line, "the header " + expected);
      header = false;
      continue;
    }
    if (f.size() != kColumnCount) {
      throw InputError(at, line, fmt::format("{} comma-separated columns", kColumnCount));
    }
    auto where = [&](std::size_t col) { return InputLocation{file.string(), number, kColumns[col]}; };
    PublishedCollective r;
    r.machine = f[0];
    r.library = f[1];
    r.op = f[2];
    if (!parse_op(r.op) && r.op != "point-to-point") {
      throw InputError(where(2), r.op, "all-reduce, reduce-scatter, all-gather or point-to-point");
    }
    r.nodes = parse_count(f[3], where(3));
    r.devices = parse_count(f[4], where(4));
    const auto bytes = parse_bytes(f[5]);
    if (!bytes || *bytes < 1 || !within(kSizeRange, *bytes))
      throw InputError(where(5), f[5], fmt::format("a size {} with a unit, e.g. \"128 MiB\"", kSizeRange.text));
    r.bytes = static_cast<Bytes>(std::llround(*bytes));
    char* end = nullptr;
    r.busbw_gbps = std::strtod(f[6].c_str(), &end);
    if (end == f[6].c_str() || *end != '\0' || !within(kBandwidthRange, r.busbw_gbps * 1e9)) {
      throw InputError(where(6), f[6], fmt::format("a bandwidth in GB/s (plain number), {}", kBandwidthRange.text));
    }
    r.source = f[7];
    r.file = file.string();
    r.line = number;
    rows.push_back(std::move(r));
  }
  if (rows.empty()) throw InputError(InputLocation{file.string(), 0, ""}, "", "at least one row");
  return rows;
}

}  // namespace ws
