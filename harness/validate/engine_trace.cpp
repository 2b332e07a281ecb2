#include "harness/validate/engine_trace.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ws {
namespace {

constexpr int kComputeThread = 0;  // engine/train/trace_writer.cpp: tid 0 = compute, 1 = comm
constexpr double kSecondsPerMicrosecond = 1e-6;

std::map<std::string, std::string> kind_by_event_name(const StepSchedule& schedule) {
  std::map<std::string, std::string> kinds;
  for (const StepOp& op : schedule.ops) {
    if (op.kind == StepOpKind::compute) kinds.emplace(op.name, to_string(op.compute));
  }
  return kinds;
}

bool is_rank0_compute_span(const nlohmann::json& e) {
  return e.value("ph", "") == "X" && e.value("pid", -1) == 0 && e.value("tid", -1) == kComputeThread;
}

}  // namespace

std::map<std::string, double> compute_by_kind_from_trace(const std::string& trace_json, const StepSchedule& schedule,
                                                         int warmup_steps) {
  const auto trace = nlohmann::json::parse(trace_json, nullptr, /*allow_exceptions=*/false);
  if (trace.is_discarded() || !trace.contains("traceEvents")) {
    throw std::runtime_error("the engine's trace is not a Chrome trace JSON");
  }
  const auto kinds = kind_by_event_name(schedule);
  const std::string& step_start = schedule.ops.front().name;
  std::map<std::string, double> seconds;
  int steps_begun = 0;
  for (const auto& e : trace.at("traceEvents")) {
    if (!is_rank0_compute_span(e)) continue;
    const std::string name = e.value("name", "");
    if (name == step_start) ++steps_begun;
    if (steps_begun <= warmup_steps) continue;
    const auto kind = kinds.find(name);
    if (kind == kinds.end() && name.rfind("wait.", 0) == 0) continue;  // a wait is exposed comm, not compute
    seconds[kind == kinds.end() ? "other" : kind->second] += e.value("dur", 0.0) * kSecondsPerMicrosecond;
  }
  const int measured_steps = steps_begun - warmup_steps;
  if (measured_steps <= 0) {
    throw std::runtime_error(fmt::format("the engine's trace has {} steps, none after the {} warm-up steps",
                                         steps_begun, warmup_steps));
  }
  for (auto& [kind, s] : seconds) s /= measured_steps;
  return seconds;
}

}  // namespace ws
