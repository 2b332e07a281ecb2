#include "harness/validate/measured_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>

#include "base/input_error.hpp"
#include "workload/comm_group.hpp"
#include "engine/train/run_config.hpp"
#include "report/csv.hpp"
#include "base/input_file.hpp"

namespace ws {
namespace {

// One data row with its header's column names, failing with file, line and column.
class Row {
 public:
  Row(const std::string& file, int line, const std::map<std::string, std::size_t>& columns,
      std::vector<std::string> fields)
      : file_(file), line_(line), columns_(columns), fields_(std::move(fields)) {}

  const std::string& text(const std::string& column) const {
    const std::size_t i = columns_.at(column);  // checked against the header before any row
    if (i >= fields_.size()) fail(column, "", "a value (the row is shorter than the header)");
    return fields_[i];
  }
  long long integer(const std::string& column, long long minimum) const {
    const std::string& t = text(column);
    long long v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size() || v < minimum) {
      fail(column, t, fmt::format("an integer >= {}", minimum));
    }
    return v;
  }
  bool has(const std::string& column) const { return columns_.count(column) > 0; }
  bool flag(const std::string& column) const {
    const std::string& t = text(column);
    if (t != "0" && t != "1") fail(column, t, "0 or 1");
    return t == "1";
  }
  double seconds(const std::string& column) const {
    const std::string& t = text(column);
    double v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v) || v < 0) {
      fail(column, t, "a time in seconds >= 0 (a plain number)");
    }
    return v;
  }
  [[noreturn]] void fail(const std::string& column, const std::string& value, const std::string& expected) const {
    throw InputError(InputLocation{file_, line_, column}, value, expected);
  }

 private:
  const std::string& file_;
  int line_;
  const std::map<std::string, std::size_t>& columns_;
  std::vector<std::string> fields_;
};

// The columns a row must have to be simulated: the configuration and what was measured. The
// engine's --csv writes them all (engine/README.md).
constexpr const char* kRequired[] = {"layout",   "ranks",     "layers",      "hidden",      "heads",
                                     "seq",      "vocab",     "batch",       "recompute",   "step_s",
                                     "cpu_s",    "compute_s", "exposed_x_s", "exposed_y_s", "exposed_z_s",
                                     "exposed_data_s", "exposed_data_z_s", "oar", "ors", "oag", "overlap_dp",
                                     "dw_tiles"};

MeasuredRun measured_run(const Row& row, int index) {
  MeasuredRun m;
  ValidationRun& run = m.run;
  run.id = fmt::format("m{:02}", index);
  const std::string& layout_text = row.text("layout");
  const std::optional<Layout> layout = parse_layout(layout_text);
  if (!layout) row.fail("layout", layout_text, "Gdata x Gx x Gy x Gz, e.g. 1x2x1x1");
  run.layout = *layout;
  const long long ranks = row.integer("ranks", 1);
  if (ranks > std::numeric_limits<int>::max() || !holds_devices(run.layout, ranks)) {
    row.fail("layout", layout_text, fmt::format("a layout of the row's {} ranks", ranks));
  }
  auto dimension = [&](const char* column) {
    return static_cast<int>(std::min<long long>(row.integer(column, 1), kMaxDimension + 1));
  };
  run.model.layers = dimension("layers");
  run.model.hidden = dimension("hidden");
  run.model.heads = dimension("heads");
  run.model.sequence_length = dimension("seq");
  run.model.vocabulary = dimension("vocab");
  // The architecture (the engine writes it since --family; rows without it are GPT-2 style).
  if (row.has("family")) {
    const std::string& family = row.text("family");
    if (family != "gpt" && family != "llama") row.fail("family", family, "gpt or llama");
    if (row.has("kv_heads")) run.model.kv_heads = dimension("kv_heads");
    if (row.has("ffn_hidden")) run.model.ffn_hidden = dimension("ffn_hidden");
    if (family == "llama") run.model = with_llama_architecture(run.model);
  }
  run.model.name = fmt::format("{}l{}-h{}", run.model.gpt_style() ? "" : "llama-", run.model.layers, run.model.hidden);
  run.sequences = row.integer("batch", 1);
  run.schedule.recompute = row.flag("recompute");
  run.schedule.overlap_all_reduce = row.flag("oar");
  run.schedule.overlap_reduce_scatter = row.flag("ors");
  run.schedule.overlap_all_gather = row.flag("oag");
  run.schedule.overlap_data_parallel = row.flag("overlap_dp");
  run.schedule.weight_gradient_tiles = static_cast<int>(std::min<long long>(row.integer("dw_tiles", 1), 1 << 20));
  // The engine's own checks, so that the simulator only sees what the engine could have run.
  RunConfig config;
  config.model = run.model;
  config.layout = run.layout;
  config.batch_sequences = run.sequences;
  config.schedule = run.schedule;
  try {
    validate_run(config, static_cast<int>(ranks));
  } catch (const InputError& e) {
    row.fail("layout", layout_text, fmt::format("a run the engine accepts: {}", e.what()));
  }
  PhaseTimes& t = m.measured;
  t.step_s = row.seconds("step_s");
  if (!(t.step_s > 0)) row.fail("step_s", row.text("step_s"), "a step time above 0 s");
  t.compute_s = row.seconds("compute_s");
  t.cpu_s = row.seconds("cpu_s");
  for (const CommGroup g : {CommGroup::x, CommGroup::y, CommGroup::z, CommGroup::data, CommGroup::data_z}) {
    t.exposed_comm_s[to_string(g)] = row.seconds(fmt::format("exposed_{}_s", to_string(g)));
  }
  return m;
}

}  // namespace

std::vector<MeasuredRun> parse_measured_runs(const std::string& text, const std::string& file, int runs_before) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw InputError(InputLocation{file, 1, ""}, "", "the engine's CSV header");
  const std::vector<std::string> header = split_csv_line(line);
  std::map<std::string, std::size_t> columns;
  for (std::size_t i = 0; i < header.size(); ++i) columns.emplace(header[i], i);
  for (const char* required : kRequired) {
    if (!columns.count(required)) {
      throw InputError(InputLocation{file, 1, required}, "",
                       "the column (a CSV of weakscale-engine --csv since 2026-11-29, which records the step's "
                       "switches)");
    }
  }
  std::vector<MeasuredRun> runs;
  int line_number = 1;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty() || line == "\r") continue;
    const Row row(file, line_number, columns, split_csv_line(line));
    runs.push_back(measured_run(row, runs_before + static_cast<int>(runs.size()) + 1));
  }
  if (runs.empty()) throw InputError(InputLocation{file, line_number, ""}, "", "at least one run (a data row)");
  return runs;
}

std::vector<MeasuredRun> read_measured_runs(const std::vector<std::filesystem::path>& files) {
  std::vector<MeasuredRun> runs;
  for (const auto& path : files) {
    const std::string file = path.string();
    const std::string text = read_input_file(path, "a readable CSV written by weakscale-engine --csv", kMaxTableFileBytes);
    for (MeasuredRun& m : parse_measured_runs(text, file, static_cast<int>(runs.size()))) runs.push_back(std::move(m));
  }
  return runs;
}

}  // namespace ws
