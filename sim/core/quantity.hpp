// Parses quantities with explicit units as written in machine files and on the command line
// ("25 GB/s", "350 ns", "64 GiB", "191.5 TFLOP/s"). Unitless numbers are rejected: a bare "25"
// could mean GB/s or Gb/s, and that ambiguity is exactly the bug this prevents.
#pragma once

#include <optional>
#include <string_view>

#include "sim/core/units.hpp"

namespace ws {

// Each returns nullopt when the text is not a number followed by one of the allowed units.
// Signs are kept: range checks (a bandwidth must be positive) belong to the caller, which knows
// the key to name in the error.
std::optional<Time> parse_time(std::string_view text);
std::optional<Bandwidth> parse_bandwidth(std::string_view text);
std::optional<double> parse_bytes(std::string_view text);  // double: sizes like "1.5 GiB"
std::optional<FlopRate> parse_flop_rate(std::string_view text);

// Human-readable lists of accepted units, for error messages.
inline constexpr std::string_view kTimeUnits = "ps, ns, us, ms, s";
inline constexpr std::string_view kBandwidthUnits = "B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, Gb/s, Tb/s";
inline constexpr std::string_view kBytesUnits = "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB";
inline constexpr std::string_view kFlopRateUnits = "FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s";

}  // namespace ws
