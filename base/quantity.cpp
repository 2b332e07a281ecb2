#include "base/quantity.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <charconv>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace ws {
namespace {

struct Split {
  double number;
  std::string_view unit;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<Split> split_number(std::string_view text) {
  text = trim(text);
  double value = 0.0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data() || !std::isfinite(value)) return std::nullopt;
  std::string_view unit = trim(std::string_view(end, static_cast<std::size_t>(text.data() + text.size() - end)));
  if (unit.empty()) return std::nullopt;
  return Split{value, unit};
}

template <std::size_t N>
std::optional<double> scaled(std::string_view text, const std::array<std::pair<std::string_view, double>, N>& units) {
  auto s = split_number(text);
  if (!s) return std::nullopt;
  for (const auto& [name, factor] : units) {
    // "1e307 TB" is a finite number times a unit that is not: found by fuzzing.
    if (s->unit == name) {
      const double value = s->number * factor;
      return std::isfinite(value) ? std::optional<double>(value) : std::nullopt;
    }
  }
  return std::nullopt;
}

constexpr double kKi = 1024.0;

}  // namespace

std::optional<Time> parse_time(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, double>, 5> units{{
      {"ps", 1e-12}, {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}}};
  auto v = scaled(text, units);
  if (!v) return std::nullopt;
  return Time::from_seconds(*v);
}

std::optional<Bandwidth> parse_bandwidth(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, double>, 10> units{{
      {"B/s", 1.0}, {"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9}, {"TB/s", 1e12},
      {"KiB/s", kKi}, {"MiB/s", kKi * kKi}, {"GiB/s", kKi * kKi * kKi},
      {"Gb/s", 1e9 / 8.0}, {"Tb/s", 1e12 / 8.0}}};
  auto v = scaled(text, units);
  if (!v) return std::nullopt;
  return Bandwidth::from_bytes_per_s(*v);
}

std::optional<double> parse_bytes(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, double>, 11> units{{
      {"B", 1.0}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"PB", 1e15},
      {"KiB", kKi}, {"MiB", kKi * kKi}, {"GiB", kKi * kKi * kKi}, {"TiB", kKi * kKi * kKi * kKi},
      {"PiB", kKi * kKi * kKi * kKi * kKi}}};
  return scaled(text, units);
}

std::optional<FlopRate> parse_flop_rate(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, double>, 4> units{{
      {"FLOP/s", 1.0}, {"GFLOP/s", 1e9}, {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}}};
  auto v = scaled(text, units);
  if (!v) return std::nullopt;
  return FlopRate::from_flops(*v);
}

std::string significant(double value, int digits) {
  if (value == 0.0 || !std::isfinite(value)) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  return fmt::format("{:.{}f}", value, std::max(0, digits - 1 - magnitude));
}

}  // namespace ws
