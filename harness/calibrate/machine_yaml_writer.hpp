// Writes a Calibration as a machine file (machines/SCHEMA.md) in which every figure carries a
// comment saying how it was measured: command, sizes, repetitions, date.
#pragma once

#include <string>

#include "harness/calibrate/calibration.hpp"

namespace ws {

// The YAML text; load_machine() reads it back to calibrated_machine(c) up to the printed digits
// (5 significant digits; times to the picosecond).
std::string format_calibrated_machine_yaml(const Calibration& c);

}  // namespace ws
