#include "sim/study/uncertainty.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/input_error.hpp"
#include "base/random.hpp"
#include "sim/machine/machine_loader.hpp"
#include "base/check.hpp"

namespace ws {

ParameterValue nominal_value(const Machine& machine, const UncertaintyRange& target) {
  ParameterValue v;
  if (is_collective_term(target.parameter)) {
    const CollectiveLibrary* library = ranged_library(machine, target);
    WS_CHECK(library != nullptr, "a range's library is one of the machine's (the loader checks it)");
    CollectiveLibrary copy = *library;
    const CollectiveTerm term = ranged_term(copy, target);
    if (term.time) v.time = *term.time;
    if (term.number) v.number = *term.number;
    return v;
  }
  switch (target.parameter) {
    case UncertainParameter::gemm_efficiency_scale:
    case UncertainParameter::attention_efficiency_scale:
    case UncertainParameter::gemm_shape_falloff: v.number = 1.0; break;
    case UncertainParameter::global_links_per_group_pair:
      v.number = machine.network.global_links_per_group_pair;
      break;
    case UncertainParameter::switch_latency: v.time = machine.network.switch_latency; break;
    case UncertainParameter::background_load: v.number = machine.network.background_load; break;
    case UncertainParameter::device_speed_spread: v.number = machine.variability.device_speed_spread; break;
    default: break;
  }
  return v;
}

ParameterValue nominal_value(const Machine& machine, UncertainParameter parameter) {
  UncertaintyRange target;
  target.parameter = parameter;
  return nominal_value(machine, target);
}

ParameterValue low_value(const UncertaintyRange& range) { return {range.low, range.low_time}; }
ParameterValue high_value(const UncertaintyRange& range) { return {range.high, range.high_time}; }

std::string format_value(UncertainParameter parameter, const ParameterValue& value) {
  if (is_latency(parameter)) {
    const double ns = value.time.ns();
    return ns >= 1000 ? fmt::format("{} us", ns / 1000) : fmt::format("{} ns", ns);
  }
  return fmt::format("{}", value.number);
}

Machine with_value(const Machine& machine, const UncertaintyRange& target, const ParameterValue& value) {
  Machine m = machine;
  if (is_collective_term(target.parameter)) {
    CollectiveLibrary* library = ranged_library(m, target);
    WS_CHECK(library != nullptr, "a range's library is one of the machine's (the loader checks it)");
    const CollectiveTerm term = ranged_term(*library, target);
    if (term.time) *term.time = value.time;
    if (term.number) *term.number = value.number;
    return m;
  }
  switch (target.parameter) {
    case UncertainParameter::gemm_efficiency_scale:
      for (auto& sample : m.device.gemm.samples) sample.efficiency = std::min(1.0, sample.efficiency * value.number);
      break;
    case UncertainParameter::global_links_per_group_pair:
      m.network.global_links_per_group_pair = static_cast<int>(std::lround(value.number));
      break;
    case UncertainParameter::switch_latency: m.network.switch_latency = value.time; break;
    case UncertainParameter::background_load: m.network.background_load = value.number; break;
    case UncertainParameter::device_speed_spread: m.variability.device_speed_spread = value.number; break;
    case UncertainParameter::attention_efficiency_scale:
      if (m.device.fused_attention) {
        auto& f = *m.device.fused_attention;
        f.forward_efficiency = std::min(1.0, f.forward_efficiency * value.number);
        f.backward_efficiency = std::min(1.0, f.backward_efficiency * value.number);
      }
      break;
    case UncertainParameter::gemm_shape_falloff: {
      // How fast efficiency falls from the best shape to small ones is what the GPU tables estimate
      // (only a best shape is published): an exponent > 1 on each sample's ratio to the best makes
      // small shapes relatively slower and leaves the best shape where its source put it.
      auto& samples = m.device.gemm.samples;
      double best = 0;
      for (const auto& sample : samples) best = std::max(best, sample.efficiency);
      for (auto& sample : samples) sample.efficiency = best * std::pow(sample.efficiency / best, value.number);
      break;
    }
    default: break;
  }
  return m;
}

Machine with_value(const Machine& machine, UncertainParameter parameter, const ParameterValue& value) {
  UncertaintyRange target;
  target.parameter = parameter;
  return with_value(machine, target, value);
}

Machine with_settings(Machine machine, const std::vector<std::string>& settings) {
  std::vector<UncertainParameter> set;
  for (const std::string& setting : settings) {
    const UncertaintyRange fixed = parse_parameter_setting(machine, setting);
    if (std::find(set.begin(), set.end(), fixed.parameter) != set.end()) {
      // A second value would compound with the first (the scales multiply the tables).
      throw InputError(InputLocation{"", 0, "--set"}, setting,
                       fmt::format("each parameter set once ({} is set twice)", to_string(fixed.parameter)));
    }
    set.push_back(fixed.parameter);
    machine = with_value(machine, fixed, low_value(fixed));
    // A setting moves the default library's own term; a range of another library or of a protocol
    // still varies.
    const std::string in_use = machine.collective_libraries.empty() ? "" : machine.collective_libraries.front().name;
    std::erase_if(machine.uncertainty, [&](const UncertaintyRange& r) {
      return r.parameter == fixed.parameter && r.protocol.empty() && (r.library.empty() || r.library == in_use);
    });
    machine.overrides.push_back(setting);
  }
  return machine;
}

Machine sampled_machine(const Machine& machine, std::uint64_t seed, int sample) {
  RandomStream rng(derive_seed(seed, static_cast<std::uint64_t>(StreamId::uncertainty)),
                   static_cast<std::uint64_t>(sample));
  Machine m = machine;
  for (const auto& range : machine.uncertainty) {
    ParameterValue v;
    if (is_latency(range.parameter)) {
      v.time = Time::from_ps(range.low_time.ps() +
                             static_cast<std::int64_t>(rng.uniform_below(
                                 static_cast<std::uint64_t>(range.high_time.ps() - range.low_time.ps()) + 1)));
    } else if (range.parameter == UncertainParameter::global_links_per_group_pair) {
      const auto lo = std::llround(range.low), hi = std::llround(range.high);
      v.number = static_cast<double>(lo + static_cast<long long>(rng.uniform_below(static_cast<std::uint64_t>(hi - lo) + 1)));
    } else {
      v.number = rng.uniform(range.low, range.high);
    }
    m = with_value(m, range, v);
  }
  return m;
}

double percentile(std::vector<double> values, double q) {
  WS_CHECK(!values.empty(), "a percentile of at least one value");
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] + fraction * (values[above] - values[below]);
}

PredictionBand prediction_band(const std::vector<double>& draws, double as_written) {
  PredictionBand band;
  band.draws_low = percentile(draws, 0.1);
  band.draws_high = percentile(draws, 0.9);
  band.low = std::min(band.draws_low, as_written);
  band.high = std::max(band.draws_high, as_written);
  return band;
}

}  // namespace ws
