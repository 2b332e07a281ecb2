// The machine file's uncertain parameters (Machine::uncertainty) turned into machines to study:
// one seeded draw of every range per sample, or one parameter moved to an end of its range, and
// the percentiles that summarise the sampled answers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/machine/machine.hpp"

namespace ws {

// A value of an uncertain parameter: `time` for latencies, `number` otherwise.
struct ParameterValue {
  double number = 0;
  Time time;
};

// The value the machine gives the term `target` names (its parameter, and for a collective term
// its library and protocol); the parameter-only form names the default library's own term.
ParameterValue nominal_value(const Machine& machine, const UncertaintyRange& target);
ParameterValue nominal_value(const Machine& machine, UncertainParameter parameter);
ParameterValue low_value(const UncertaintyRange& range);
ParameterValue high_value(const UncertaintyRange& range);
// "350 ns", "0.72", "4": the value as a machine file would write it.
std::string format_value(UncertainParameter parameter, const ParameterValue& value);

// The machine with one parameter replaced (gemm_efficiency_scale multiplies the nominal table;
// gemm_shape_falloff raises each sample's ratio to the table's best sample to that power).
Machine with_value(const Machine& machine, const UncertaintyRange& target, const ParameterValue& value);
Machine with_value(const Machine& machine, UncertainParameter parameter, const ParameterValue& value);


// The machine with each "NAME=VALUE" of `settings` applied in order (parse_parameter_setting,
// sim/machine/machine_loader.hpp, throws InputError for a bad one): the parameter is then fixed,
// so its range leaves machine.uncertainty (samples and the sensitivity table stop varying it), and
// the setting is recorded in machine.overrides.
Machine with_settings(Machine machine, const std::vector<std::string>& settings);

// Sample `sample` of root seed `seed`: every range of the machine drawn once, uniformly (integers
// uniformly from low..high), in the file's order, from the stream (seed, uncertainty) -> sample.
// A sample depends only on (seed, sample), never on which process or in which order it is drawn.
Machine sampled_machine(const Machine& machine, std::uint64_t seed, int sample);

// Percentile q in [0, 1] by linear interpolation between order statistics (q = 0.5: the median).
// Precondition: values not empty.
double percentile(std::vector<double> values, double q);

// What a measurement is checked against: the 10th-90th percentile of a prediction's draws,
// widened to hold the prediction from the file as written. A `best_to_typical` range puts the
// written value at its best end, so the written prediction lies at or beyond the draws' 90th
// percentile, yet it is a case runs do see (a run at the best case is inside the sources).
struct PredictionBand {
  double low = 0, high = 0;              // the band
  double draws_low = 0, draws_high = 0;  // the draws' 10th and 90th percentile alone
};
// Precondition: draws not empty.
PredictionBand prediction_band(const std::vector<double>& draws, double as_written);

}  // namespace ws
