#include "report/validation/validation_writers.hpp"

#include "report/csv.hpp"

#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ws {
namespace {

// Configuration columns, then step time and error, then the phases as measured / simulated pairs.
const std::vector<std::string> kRunColumns{"run",     "layers", "hidden", "heads",  "seq",   "vocab",
                                           "batch",   "layout", "ranks",  "recompute", "oar", "ors",
                                           "oag",     "overlap_dp", "steps", "warmup", "family", "kv_heads",
                                           "ffn_hidden"};

// Phase columns: compute, exposed communication per group, then compute per kind of op.
std::vector<std::string> phase_names() {
  std::vector<std::string> names{"compute"};
  for (const CommGroup g : kAllCommGroups) names.push_back(std::string("exposed_") + to_string(g));
  for (const auto& kind : compute_kind_names()) names.push_back("compute_" + kind);
  names.emplace_back("progress");  // in compute_s, outside every kind: MPI moving collectives' data
  return names;
}

const std::size_t kFirstKindPhase = 1 + kAllCommGroups.size();

double phase_value(const PhaseTimes& t, std::size_t phase) {
  if (phase == 0) return t.compute_s;
  if (phase < kFirstKindPhase) return t.exposed(to_string(kAllCommGroups[phase - 1]));
  if (phase == kFirstKindPhase + compute_kind_names().size()) return t.progress_s;
  return t.compute(compute_kind_names()[phase - kFirstKindPhase]);
}

void set_phase(PhaseTimes& t, std::size_t phase, double value) {
  if (phase == 0) {
    t.compute_s = value;
  } else if (phase < kFirstKindPhase) {
    t.exposed_comm_s[to_string(kAllCommGroups[phase - 1])] = value;
  } else if (phase == kFirstKindPhase + compute_kind_names().size()) {
    t.progress_s = value;
  } else if (value != 0) {  // kinds the step does not have stay absent, as the simulator leaves them
    t.compute_by_kind_s[compute_kind_names()[phase - kFirstKindPhase]] = value;
  }
}

// Reads one CSV row's fields by column, naming line and column when a value does not parse.
class RowReader {
 public:
  RowReader(std::vector<std::string> fields, int line) : fields_(std::move(fields)), line_(line) {}
  const std::string& text(std::size_t column) const { return fields_.at(column); }
  double number(std::size_t column) const {
    try {
      std::size_t used = 0;
      const double v = std::stod(text(column), &used);
      if (used == text(column).size()) return v;
    } catch (const std::logic_error&) {
    }
    throw std::runtime_error(fmt::format("validation CSV line {}, column {} ({}): '{}' is not a number", line_,
                                         column + 1, validation_csv_columns()[column], text(column)));
  }
  int integer(std::size_t column) const { return static_cast<int>(number(column)); }
  bool flag(std::size_t column) const { return integer(column) != 0; }

 private:
  std::vector<std::string> fields_;
  int line_;
};

std::string format_row(const ValidationRecord& r) {
  const ModelSpec& m = r.run.model;
  const StepScheduleOptions& o = r.run.schedule;
  std::string row = fmt::format("{},{},{},{},{},{},{},{},{},{:d},{:d},{:d},{:d},{:d},{},{},{},{},{}", r.run.id, m.layers,
                                m.hidden, m.heads, m.sequence_length, m.vocabulary, r.run.sequences,
                                csv_field(to_string(r.run.layout)), r.run.ranks(), o.recompute, o.overlap_all_reduce,
                                o.overlap_reduce_scatter, o.overlap_all_gather, o.overlap_data_parallel, r.run.steps,
                                r.run.warmup, family_name(m), m.kv_head_count(), m.ffn());
  const auto sim = [&](auto value) { return r.simulated ? fmt::format("{}", value(*r.simulated)) : std::string(); };
  row += fmt::format(",{},{},{},{},{}", r.measured.step_s, sim([](const PhaseTimes& t) { return t.step_s; }),
                     r.simulated ? fmt::format("{}", relative_error(r.measured.step_s, r.simulated->step_s)) : "",
                     r.measured.cpu_s, r.measured.host_speed);
  const auto& file = r.simulated_on_file;
  row += fmt::format(",{},{}", file ? fmt::format("{}", file->step_s) : "",
                     file ? fmt::format("{}", relative_error(r.measured.step_s, file->step_s)) : "");
  for (std::size_t p = 0; p < phase_names().size(); ++p) {
    row += fmt::format(",{},{}", phase_value(r.measured, p),
                       sim([p](const PhaseTimes& t) { return phase_value(t, p); }));
  }
  return row;
}

ValidationRecord parse_row(const RowReader& f) {
  ValidationRecord r;
  ValidationRun& run = r.run;
  run.id = f.text(0);
  run.model.name = fmt::format("h{}l{}", f.text(2), f.text(1));
  run.model.layers = f.integer(1);
  run.model.hidden = f.integer(2);
  run.model.heads = f.integer(3);
  run.model.sequence_length = f.integer(4);
  run.model.vocabulary = f.integer(5);
  run.sequences = f.integer(6);
  const auto layout = parse_layout(f.text(7));
  if (!layout) throw std::runtime_error(fmt::format("validation CSV: '{}' is not a layout", f.text(7)));
  run.layout = *layout;
  run.schedule.recompute = f.flag(9);
  run.schedule.overlap_all_reduce = f.flag(10);
  run.schedule.overlap_reduce_scatter = f.flag(11);
  run.schedule.overlap_all_gather = f.flag(12);
  run.schedule.overlap_data_parallel = f.flag(13);
  run.steps = f.integer(14);
  run.warmup = f.integer(15);
  // The architecture as the engine's --family, --kv-heads and --ffn-hidden give it.
  if (f.text(16) != "gpt" && f.text(16) != "llama")
    throw std::runtime_error(fmt::format("validation CSV: '{}' is not a family (gpt or llama)", f.text(16)));
  const int kv_heads = f.integer(17), ffn = f.integer(18);
  if (f.text(16) == "llama") {
    run.model.kv_heads = kv_heads, run.model.ffn_hidden = ffn;
    run.model = with_llama_architecture(run.model);
    run.model.name = fmt::format("llama-h{}l{}", f.text(2), f.text(1));
  } else {  // GPT-2 style: the defaults stay unset, as the validation matrix leaves them
    if (kv_heads != run.model.heads) run.model.kv_heads = kv_heads;
    if (ffn != 4 * run.model.hidden) run.model.ffn_hidden = ffn;
  }
  const std::size_t first = kRunColumns.size();
  r.measured.step_s = f.number(first);
  const bool simulated = !f.text(first + 1).empty();
  if (simulated) r.simulated = PhaseTimes{f.number(first + 1), 0, {}, 0};
  r.measured.cpu_s = f.number(first + 3);
  r.measured.host_speed = f.number(first + 4);
  if (!f.text(first + 5).empty()) r.simulated_on_file = PhaseTimes{f.number(first + 5), 0, {}, 0};
  for (std::size_t p = 0; p < phase_names().size(); ++p) {
    const std::size_t column = first + 7 + 2 * p;
    set_phase(r.measured, p, f.number(column));
    if (simulated) set_phase(*r.simulated, p, f.number(column + 1));
  }
  return r;
}

nlohmann::json phases_json(const PhaseTimes& t) {
  nlohmann::json comm = nlohmann::json::object();
  for (const auto& [group, seconds] : t.exposed_comm_s) comm[group] = seconds;
  nlohmann::json kinds = nlohmann::json::object();
  for (const auto& [kind, seconds] : t.compute_by_kind_s) kinds[kind] = seconds;
  nlohmann::json j{{"step_s", t.step_s}, {"compute_s", t.compute_s}, {"exposed_comm_s", comm},
                   {"compute_by_kind_s", kinds}, {"progress_s", t.progress_s}};
  if (t.cpu_s > 0) j["cpu_s"] = t.cpu_s;
  if (t.host_speed > 0) j["host_speed"] = t.host_speed;
  return j;
}

nlohmann::json run_json(const ValidationRecord& r) {
  const ModelSpec& m = r.run.model;
  const StepScheduleOptions& o = r.run.schedule;
  nlohmann::json j{{"run", r.run.id},
                   {"model", {{"layers", m.layers}, {"hidden", m.hidden}, {"heads", m.heads},
                              {"seq", m.sequence_length}, {"vocab", m.vocabulary}}},
                   {"batch", r.run.sequences},
                   {"layout", to_string(r.run.layout)},
                   {"ranks", r.run.ranks()},
                   {"recompute", o.recompute},
                   {"overlap", {{"oar", o.overlap_all_reduce}, {"ors", o.overlap_reduce_scatter},
                                {"oag", o.overlap_all_gather}, {"data_parallel", o.overlap_data_parallel}}},
                   {"steps", r.run.steps},
                   {"warmup", r.run.warmup},
                   {"measured", phases_json(r.measured)}};
  if (r.simulated) {
    j["simulated"] = phases_json(*r.simulated);
    j["relative_error"] = relative_error(r.measured.step_s, r.simulated->step_s);
  }
  if (r.simulated_on_file) {
    j["simulated_on_file"] = phases_json(*r.simulated_on_file);
    j["file_relative_error"] = relative_error(r.measured.step_s, r.simulated_on_file->step_s);
  }
  return j;
}

}  // namespace

const std::vector<std::string>& validation_csv_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c = kRunColumns;
    c.insert(c.end(), {"measured_step_s", "simulated_step_s", "relative_error", "measured_cpu_s", "host_speed",
                       "file_simulated_step_s", "file_relative_error"});
    for (const auto& phase : phase_names()) {
      c.push_back("measured_" + phase + "_s");
      c.push_back("simulated_" + phase + "_s");
    }
    return c;
  }();
  return columns;
}

std::string format_validation_csv(const std::vector<ValidationRecord>& records) {
  std::string text = fmt::format("{}\n", fmt::join(validation_csv_columns(), ","));
  for (const auto& r : records) text += format_row(r) + "\n";
  return text;
}

std::vector<ValidationRecord> parse_validation_csv(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || split_csv_line(line) != validation_csv_columns()) {
    throw std::runtime_error("validation CSV: the first line is not the expected header");
  }
  std::vector<ValidationRecord> records;
  int line_number = 1;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty()) continue;
    auto fields = split_csv_line(line);
    if (fields.size() != validation_csv_columns().size()) {
      throw std::runtime_error(fmt::format("validation CSV line {}: {} fields, expected {}", line_number,
                                           fields.size(), validation_csv_columns().size()));
    }
    records.push_back(parse_row(RowReader(std::move(fields), line_number)));
  }
  return records;
}

std::string format_validation_json(const std::vector<ValidationRecord>& records,
                                   const std::optional<ErrorSummary>& errors, const ValidationProvenance& p) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : records) runs.push_back(run_json(r));
  nlohmann::json j{{"command", p.command_line}, {"machine", p.machine_name}, {"machine_file", p.machine_file},
                   {"git_commit", p.git_commit}, {"host_cores", p.host_cores}, {"wall_s", p.wall_s},
                   {"median_core_share", p.median_core_share},
                   {"median_host_speed", p.median_host_speed},
                   {"rank_network", p.rank_network},
                   {"runs_per_configuration", p.runs_per_configuration},
                   {"host_tracking", p.host_tracking},
                   {"runs", runs}};
  if (errors) {
    const auto& worst = records.at(errors->worst_record);
    j["errors"] = {{"simulated_runs", errors->runs},
                   {"median_abs_relative_error", errors->median_abs_error},
                   {"worst_abs_relative_error", errors->worst_abs_error},
                   {"worst_run", worst.run.id},
                   {"worst_run_phase_off_most", {{"phase", errors->worst_phase.phase},
                                                 {"measured_s", errors->worst_phase.measured_s},
                                                 {"simulated_s", errors->worst_phase.simulated_s}}},
                   {"worst_run_compute_kind_off_most", {{"kind", errors->worst_kind.phase},
                                                        {"measured_s", errors->worst_kind.measured_s},
                                                        {"simulated_s", errors->worst_kind.simulated_s}}}};
  }
  if (const auto on_file = summarize_errors_on_file(records)) {
    j["errors_on_file"] = {{"simulated_runs", on_file->runs},
                           {"median_abs_relative_error", on_file->median_abs_error},
                           {"worst_abs_relative_error", on_file->worst_abs_error},
                           {"worst_run", records.at(on_file->worst_record).run.id}};
  }
  return j.dump(2) + "\n";
}

}  // namespace ws
