#include "engine/train/step_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "engine/comm/mpi_check.hpp"
#include "workload/flops.hpp"

namespace ws {

namespace {
constexpr int kFieldsPerGroup = 6;
}

StepRecord reduce_step(const StepResult& local, const Communicator& world) {
  StepRecord r;
  r.step = local.step;
  r.loss = local.loss;
  r.seconds = local.seconds;
  r.cpu_seconds = local.cpu_seconds;
  std::vector<double> sums;
  sums.reserve(kCommGroups * kFieldsPerGroup);
  for (const GroupTotals& g : local.communication)
    sums.insert(sums.end(), {g.blocked.seconds(), g.waited.seconds(), g.in_flight.seconds(), g.progress.seconds(), static_cast<double>(g.bytes),
                             static_cast<double>(g.collectives)});
  if (world.size() > 1) {
    WS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &r.seconds, 1, MPI_DOUBLE, MPI_MAX, world.comm()));
    WS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &r.cpu_seconds, 1, MPI_DOUBLE, MPI_SUM, world.comm()));
    r.cpu_seconds /= world.size();
    WS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM,
                               world.comm()));
  }
  const double ranks = world.size();
  for (int g = 0; g < kCommGroups; ++g) {
    const double* f = sums.data() + g * kFieldsPerGroup;
    GroupTotals& t = r.communication[static_cast<std::size_t>(g)];
    t.blocked = Time::from_seconds(f[0] / ranks), t.waited = Time::from_seconds(f[1] / ranks);
    t.in_flight = Time::from_seconds(f[2] / ranks), t.progress = Time::from_seconds(f[3] / ranks);
    t.bytes = static_cast<std::uint64_t>(f[4] / ranks);
    t.collectives = static_cast<long long>(f[5] / ranks);
  }
  return r;
}

RunSummary summarize(const std::vector<StepRecord>& records, int warmup, const ModelSpec& model,
                     long long batch_sequences, bool recompute, int devices,
                     std::optional<double> peak_flop_per_s_per_device) {
  if (warmup < 0 || static_cast<std::size_t>(warmup) >= records.size())
    throw std::invalid_argument(
        fmt::format("summary needs 0 <= warm-up steps ({}) < steps ({})", warmup, records.size()));
  RunSummary s;
  s.measured_steps = static_cast<int>(records.size()) - warmup;
  s.first_step = records[static_cast<std::size_t>(warmup)].step;
  s.step_min_s = 1e300;
  for (std::size_t i = static_cast<std::size_t>(warmup); i < records.size(); ++i) {
    const StepRecord& r = records[i];
    s.step_s += r.seconds;
    s.cpu_s += r.cpu_seconds;
    s.step_min_s = std::min(s.step_min_s, r.seconds);
    s.step_max_s = std::max(s.step_max_s, r.seconds);
    for (int g = 0; g < kCommGroups; ++g) {
      const GroupTotals& t = r.communication[static_cast<std::size_t>(g)];
      GroupSummary& out = s.groups[static_cast<std::size_t>(g)];
      out.exposed_s += t.blocked.seconds(), out.in_flight_s += t.in_flight.seconds(), out.waited_s += t.waited.seconds();
      out.progress_s += t.progress.seconds();
      out.bytes += static_cast<double>(t.bytes), out.collectives += static_cast<double>(t.collectives);
    }
  }
  const double n = s.measured_steps;
  s.step_s /= n;
  s.cpu_s /= n;
  for (GroupSummary& g : s.groups) {
    g.exposed_s /= n, g.in_flight_s /= n, g.waited_s /= n, g.progress_s /= n, g.bytes /= n, g.collectives /= n;
    s.exposed_s += g.exposed_s;
  }
  s.compute_s = s.step_s - s.exposed_s;
  const Batch batch{batch_sequences};
  s.tokens_per_s = static_cast<double>(batch_tokens(model, batch)) / s.step_s;
  s.model_flops = model_flops_per_step(model, batch);
  s.hardware_flops = executed_flops_per_step(model, batch, recompute);
  s.model_flop_per_s = s.model_flops / s.step_s;
  s.hardware_flop_per_s = s.hardware_flops / s.step_s;
  s.peak_flop_per_s_per_device = peak_flop_per_s_per_device;
  if (peak_flop_per_s_per_device) {
    const double peak = *peak_flop_per_s_per_device * devices;
    s.percent_of_peak_model = 100.0 * s.model_flop_per_s / peak;
    s.percent_of_peak_hardware = 100.0 * s.hardware_flop_per_s / peak;
  }
  return s;
}

std::string summary_json(const RunSummary& s) {
  nlohmann::json comm = nlohmann::json::object(), overlap = nlohmann::json::object();
  for (int g = 0; g < kCommGroups; ++g) {
    const GroupSummary& t = s.groups[static_cast<std::size_t>(g)];
    if (t.collectives == 0) continue;
    const char* name = to_string(static_cast<CommGroup>(g));
    comm[name] = {{"exposed_s", t.exposed_s}, {"progress_s", t.progress_s}, {"bytes", t.bytes},
                  {"collectives", t.collectives}};
    if (t.in_flight_s > 0)
      overlap[name] = {{"in_flight_s", t.in_flight_s},
                       {"exposed_s", t.waited_s},
                       {"hidden_s", t.in_flight_s - t.waited_s},
                       {"hidden_fraction", t.hidden_fraction()}};
  }
  nlohmann::json line{{"event", "summary"},
                      {"measured_steps", s.measured_steps},
                      {"first_measured_step", s.first_step},
                      {"step_s", s.step_s},
                      {"step_min_s", s.step_min_s},
                      {"step_max_s", s.step_max_s},
                      {"cpu_s", s.cpu_s},
                      {"compute_s", s.compute_s},
                      {"exposed_comm_s", s.exposed_s},
                      {"comm", comm},
                      {"overlap", overlap},
                      {"tokens_per_s", s.tokens_per_s},
                      {"model_flops_per_step", s.model_flops},
                      {"hardware_flops_per_step", s.hardware_flops},
                      {"model_flop_per_s", s.model_flop_per_s},
                      {"hardware_flop_per_s", s.hardware_flop_per_s}};
  if (s.peak_flop_per_s_per_device) {
    line["peak_fp32_flop_per_s_per_device"] = *s.peak_flop_per_s_per_device;
    line["percent_of_peak_model"] = s.percent_of_peak_model;
    line["percent_of_peak_hardware"] = s.percent_of_peak_hardware;
  }
  return line.dump();
}

std::string csv_header() {
  return "layout,ranks,layers,hidden,heads,seq,vocab,batch,recompute,measured_steps,step_s,cpu_s,compute_s,"
         "exposed_x_s,exposed_y_s,exposed_z_s,exposed_data_s,exposed_data_z_s,model_flop_per_s,"
         "hardware_flop_per_s,peak_fp32_flop_per_s,percent_of_peak_model,percent_of_peak_hardware,oar,ors,oag,"
         "overlap_dp,dw_tiles,family,kv_heads,ffn_hidden";
}

std::string csv_row(const RunSummary& s, const RunConfig& run) {
  const auto exposed = [&](CommGroup g) { return s.groups[static_cast<std::size_t>(g)].exposed_s; };
  const ModelSpec& m = run.model;
  return fmt::format(
      "{},{},{},{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{},{},{},{},{},"
      "{},{},{},{},{},{}",
      to_string(run.layout), run.layout.devices(), m.layers, m.hidden, m.heads, m.sequence_length,
      m.vocabulary, run.batch_sequences, run.schedule.recompute ? 1 : 0, s.measured_steps, s.step_s, s.cpu_s, s.compute_s,
      exposed(CommGroup::x), exposed(CommGroup::y), exposed(CommGroup::z), exposed(CommGroup::data),
      exposed(CommGroup::data_z), s.model_flop_per_s, s.hardware_flop_per_s,
      s.peak_flop_per_s_per_device ? fmt::format("{:.6g}", *s.peak_flop_per_s_per_device) : "",
      s.peak_flop_per_s_per_device ? fmt::format("{:.4g}", s.percent_of_peak_model) : "",
      s.peak_flop_per_s_per_device ? fmt::format("{:.4g}", s.percent_of_peak_hardware) : "",
      run.schedule.overlap_all_reduce ? 1 : 0, run.schedule.overlap_reduce_scatter ? 1 : 0,
      run.schedule.overlap_all_gather ? 1 : 0, run.schedule.overlap_data_parallel ? 1 : 0,
      run.schedule.weight_gradient_tiles, family_name(m), m.kv_head_count(), m.ffn());
}

}  // namespace ws
