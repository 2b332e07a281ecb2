// Strong types for simulated time, bandwidth and compute rate, and the one place where
// bytes / bandwidth becomes time. Time is integer picoseconds: exact, ordered, and wide enough
// (int64 ps = 106 days) for any training step. Beyond that range it saturates at Time::max()
// (or min()) instead of wrapping: a duration that overflowed sorts last, never first; a NaN
// converts to max(). The loaders keep inputs in plausible ranges (base/quantity.hpp), so
// saturation is the last line, not the first.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <string>

namespace ws {

using Bytes = std::uint64_t;

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time from_ps(std::int64_t ps) { return Time(ps); }
  static constexpr Time from_ns(double ns) { return Time(round_ps(ns * 1e3)); }
  static constexpr Time from_us(double us) { return Time(round_ps(us * 1e6)); }
  static constexpr Time from_ms(double ms) { return Time(round_ps(ms * 1e9)); }
  static constexpr Time from_seconds(double s) { return Time(round_ps(s * 1e12)); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }

  constexpr std::int64_t ps() const { return ps_; }
  constexpr double ns() const { return static_cast<double>(ps_) * 1e-3; }
  constexpr double us() const { return static_cast<double>(ps_) * 1e-6; }
  constexpr double ms() const { return static_cast<double>(ps_) * 1e-9; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }

  constexpr Time& operator+=(Time o) { return *this = *this + o; }
  constexpr Time& operator-=(Time o) { return *this = *this - o; }
  friend constexpr Time operator+(Time a, Time b) {
    std::int64_t r = 0;
    return __builtin_add_overflow(a.ps_, b.ps_, &r) ? saturated(b.ps_ > 0) : Time(r);
  }
  friend constexpr Time operator-(Time a, Time b) {
    std::int64_t r = 0;
    return __builtin_sub_overflow(a.ps_, b.ps_, &r) ? saturated(b.ps_ < 0) : Time(r);
  }
  friend constexpr Time operator*(Time a, std::int64_t k) {
    std::int64_t r = 0;
    return __builtin_mul_overflow(a.ps_, k, &r) ? saturated((a.ps_ > 0) == (k > 0)) : Time(r);
  }
  friend constexpr Time operator*(std::int64_t k, Time a) { return a * k; }
  // Whether this time is a saturated (overflowed) one.
  constexpr bool saturated() const { return ps_ == std::numeric_limits<std::int64_t>::max() || ps_ == kMin; }
  // Scaling by a real factor (efficiencies, fractions) rounds to the nearest picosecond.
  friend constexpr Time scale(Time a, double f) { return Time(round_ps(static_cast<double>(a.ps_) * f)); }
  friend constexpr double operator/(Time a, Time b) { return static_cast<double>(a.ps_) / static_cast<double>(b.ps_); }
  friend constexpr auto operator<=>(Time, Time) = default;

 private:
  constexpr explicit Time(std::int64_t ps) : ps_(ps) {}
  // The lowest value is -max (not int64's -max - 1), so that negating a saturated time stays one.
  static constexpr std::int64_t kMin = -std::numeric_limits<std::int64_t>::max();
  static constexpr Time saturated(bool positive) { return Time(positive ? max().ps_ : kMin); }
  static constexpr std::int64_t round_ps(double ps) {
    // 9.2e18 < 2^63: the conversion below is defined for every value that passes; NaN fails both
    // comparisons and saturates high.
    if (!(ps < 9.2e18)) return std::numeric_limits<std::int64_t>::max();
    if (ps <= -9.2e18) return kMin;
    return static_cast<std::int64_t>(ps < 0 ? ps - 0.5 : ps + 0.5);
  }
  std::int64_t ps_ = 0;
};

constexpr Time max(Time a, Time b) { return a < b ? b : a; }
constexpr Time min(Time a, Time b) { return a < b ? a : b; }

// Bytes per second, per direction where a link is concerned.
class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth from_bytes_per_s(double bps) { return Bandwidth(bps); }
  static constexpr Bandwidth from_gbps(double gb_per_s) { return Bandwidth(gb_per_s * 1e9); }
  constexpr double bytes_per_s() const { return bps_; }
  constexpr double gbps() const { return bps_ * 1e-9; }
  friend constexpr Bandwidth operator*(Bandwidth b, double f) { return Bandwidth(b.bps_ * f); }
  friend constexpr Bandwidth operator*(double f, Bandwidth b) { return Bandwidth(b.bps_ * f); }
  friend constexpr Bandwidth operator/(Bandwidth b, double f) { return Bandwidth(b.bps_ / f); }
  friend constexpr Bandwidth operator+(Bandwidth a, Bandwidth b) { return Bandwidth(a.bps_ + b.bps_); }
  friend constexpr auto operator<=>(Bandwidth, Bandwidth) = default;

 private:
  constexpr explicit Bandwidth(double bps) : bps_(bps) {}
  double bps_ = 0.0;
};

constexpr Bandwidth min(Bandwidth a, Bandwidth b) { return a < b ? a : b; }

// Floating-point operations per second.
class FlopRate {
 public:
  constexpr FlopRate() = default;
  static constexpr FlopRate from_flops(double f) { return FlopRate(f); }
  static constexpr FlopRate from_tflops(double tf) { return FlopRate(tf * 1e12); }
  constexpr double flops() const { return f_; }
  constexpr double tflops() const { return f_ * 1e-12; }
  friend constexpr FlopRate operator*(FlopRate r, double k) { return FlopRate(r.f_ * k); }
  friend constexpr auto operator<=>(FlopRate, FlopRate) = default;

 private:
  constexpr explicit FlopRate(double f) : f_(f) {}
  double f_ = 0.0;
};

// The inverse of a bandwidth: time per byte, as the most loaded of a set of links gives it (the
// bottleneck of a collective phase, per byte of its largest transfer). Zero: nothing limits.
class TimePerByte {
 public:
  constexpr TimePerByte() = default;
  static constexpr TimePerByte from_seconds_per_byte(double s) { return TimePerByte(s); }
  constexpr double seconds_per_byte() const { return s_; }
  friend constexpr TimePerByte operator*(TimePerByte t, double f) { return TimePerByte(t.s_ * f); }
  friend constexpr auto operator<=>(TimePerByte, TimePerByte) = default;

 private:
  constexpr explicit TimePerByte(double s) : s_(s) {}
  double s_ = 0;
};

// Sizes in GiB, for writers only (tables, CSV, messages).
constexpr double to_gib(Bytes bytes) { return static_cast<double>(bytes) / 1073741824.0; }

// The one conversion from an amount of data or work to time.
constexpr Time transfer_time(double bytes, Bandwidth bw) {
  return Time::from_seconds(bytes / bw.bytes_per_s());
}
constexpr Time transfer_time(double bytes, TimePerByte t) {
  return Time::from_seconds(bytes * t.seconds_per_byte());
}
constexpr Time compute_time(double flops, FlopRate rate) {
  return Time::from_seconds(flops / rate.flops());
}

namespace literals {
constexpr Time operator""_ps(unsigned long long v) { return Time::from_ps(static_cast<std::int64_t>(v)); }
constexpr Time operator""_ns(unsigned long long v) { return Time::from_ns(static_cast<double>(v)); }
constexpr Time operator""_ns(long double v) { return Time::from_ns(static_cast<double>(v)); }
constexpr Time operator""_us(unsigned long long v) { return Time::from_us(static_cast<double>(v)); }
constexpr Time operator""_us(long double v) { return Time::from_us(static_cast<double>(v)); }
constexpr Time operator""_ms(unsigned long long v) { return Time::from_ms(static_cast<double>(v)); }
constexpr Time operator""_s(unsigned long long v) { return Time::from_seconds(static_cast<double>(v)); }
constexpr Bandwidth operator""_GBps(unsigned long long v) { return Bandwidth::from_gbps(static_cast<double>(v)); }
constexpr Bandwidth operator""_GBps(long double v) { return Bandwidth::from_gbps(static_cast<double>(v)); }
constexpr Bytes operator""_KiB(unsigned long long v) { return v << 10; }
constexpr Bytes operator""_MiB(unsigned long long v) { return v << 20; }
constexpr Bytes operator""_GiB(unsigned long long v) { return v << 30; }
constexpr FlopRate operator""_TFLOPS(long double v) { return FlopRate::from_tflops(static_cast<double>(v)); }
constexpr FlopRate operator""_TFLOPS(unsigned long long v) { return FlopRate::from_tflops(static_cast<double>(v)); }
}  // namespace literals

}  // namespace ws
