// Parses quantities with explicit units as written in machine files and on the command line
// ("25 GB/s", "350 ns", "64 GiB", "191.5 TFLOP/s"). Unitless numbers are rejected: a bare "25"
// could mean GB/s or Gb/s, and that ambiguity is exactly the bug this prevents.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/units.hpp"

namespace ws {

// Each returns nullopt when the text is not a finite number followed by one of the allowed units
// ("inf GB/s" and "nan s" are not quantities).
// Signs are kept: range checks (a bandwidth must be positive) belong to the caller, which knows
// the key to name in the error.
std::optional<Time> parse_time(std::string_view text);
std::optional<Bandwidth> parse_bandwidth(std::string_view text);
std::optional<double> parse_bytes(std::string_view text);  // double: sizes like "1.5 GiB"
std::optional<FlopRate> parse_flop_rate(std::string_view text);

// Plausible ranges, checked by every loader of machine files and command-line quantities: a
// value outside is a typo of its unit ("300 B/s" meant GB/s, "312 FLOP/s" meant TFLOP/s), not a
// machine, and would take simulated durations past Time's range. Bounds are wide on purpose: the
// slowest shaped test link is 1 Gb/s, the fastest HBM 8 TB/s, the slowest device a CPU core.
struct PlausibleRange {
  double low;
  double high;
  std::string_view text;  // for error messages, e.g. "between 1 MB/s and 100 TB/s"
};
inline constexpr PlausibleRange kBandwidthRange{1e6, 1e14, "between 1 MB/s and 100 TB/s"};
inline constexpr PlausibleRange kLatencyRange{0.0, 1.0, "between 0 s and 1 s"};  // seconds
inline constexpr PlausibleRange kFlopRateRange{1e6, 1e18, "between 1 MFLOP/s and 1000 PFLOP/s"};
inline constexpr PlausibleRange kCapacityRange{1.0, 1125899906842624.0, "between 1 B and 1 PiB"};
inline constexpr PlausibleRange kSizeRange{0.0, 1125899906842624.0, "between 0 B and 1 PiB"};
inline constexpr bool within(const PlausibleRange& r, double v) { return v >= r.low && v <= r.high; }

// `value` fixed-point with `digits` significant digits, as machine files write numbers: the parsers
// above take no exponent. 0 (and a non-finite value) is "0".
std::string significant(double value, int digits = 5);

// Human-readable lists of accepted units, for error messages.
inline constexpr std::string_view kTimeUnits = "ps, ns, us, ms, s";
inline constexpr std::string_view kBandwidthUnits = "B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, Gb/s, Tb/s";
inline constexpr std::string_view kBytesUnits = "B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB";
inline constexpr std::string_view kFlopRateUnits = "FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s";

}  // namespace ws
