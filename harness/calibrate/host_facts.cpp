#include "harness/calibrate/host_facts.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <fstream>
#include <sstream>
#include <string_view>

namespace ws {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string trim(std::string_view s) {
  const auto begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return "";
  const auto end = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(begin, end - begin + 1));
}

// The value of the first "key : value" line of a /proc-style file, or "".
std::string field(const std::string& text, std::string_view key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (trim(std::string_view(line).substr(0, colon)) == key) return trim(std::string_view(line).substr(colon + 1));
  }
  return "";
}

bool has_flag(const std::string& flags, std::string_view flag) {
  std::istringstream words(flags);
  std::string word;
  while (words >> word) {
    if (word == flag) return true;
  }
  return false;
}

// "32768K", "32 MiB", "1024K" as in /sys/devices/system/cpu/cpu0/cache/index*/size.
double parse_cache_size(const std::string& text) {
  std::istringstream in(text);
  double value = 0;
  std::string unit;
  if (!(in >> value)) return 0;
  in >> unit;
  if (unit.empty()) return value;
  if (unit[0] == 'K') return value * 1024.0;
  if (unit[0] == 'M') return value * 1024.0 * 1024.0;
  if (unit[0] == 'G') return value * 1024.0 * 1024.0 * 1024.0;
  return value;
}

}  // namespace

void apply_cpuinfo(const std::string& cpuinfo_text, HostFacts& facts) {
  facts.cpu_model = field(cpuinfo_text, "model name");
  const std::string flags = field(cpuinfo_text, "flags");
  facts.has_fma = has_flag(flags, "fma");
  if (has_flag(flags, "avx512f")) {
    facts.vector_isa = "avx512f";
    facts.fp32_lanes = 16;
    facts.has_fma = true;
  } else if (has_flag(flags, "avx2") || has_flag(flags, "avx")) {
    facts.vector_isa = has_flag(flags, "avx2") ? "avx2" : "avx";
    facts.fp32_lanes = 8;
  } else {
    facts.vector_isa = "sse";
    facts.fp32_lanes = 4;
  }
  if (facts.has_fma && facts.vector_isa != "avx512f") facts.vector_isa += "+fma";
  // /proc does not show how many FMA pipes a core has. Server x86 cores since Haswell and Zen 2
  // issue two vector FMAs per cycle, so we assume 2; cores with one AVX-512 FMA unit (some Xeon
  // Silver) are overestimated by 2x. Without FMA, one multiply and one add pipe count as 1 unit of
  // 2 x lanes flops. The caller raises the peak to the best measured rate if a GEMM ever beats it.
  facts.fma_units = facts.has_fma ? 2 : 1;
  if (facts.clock_hz <= 0) {
    const std::string mhz = field(cpuinfo_text, "cpu MHz");
    if (!mhz.empty()) {
      try {
        facts.clock_hz = std::stod(mhz) * 1e6;
        facts.clock_source = "/proc/cpuinfo 'cpu MHz' (current clock; no cpufreq maximum exposed)";
      } catch (const std::exception&) {
        facts.clock_hz = 0;
      }
    }
  }
}

HostFacts read_host_facts() {
  HostFacts facts;
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) == 0) facts.hostname = name.data();
  facts.machine_id = trim(read_text("/etc/machine-id"));
  facts.boot_id = trim(read_text("/proc/sys/kernel/random/boot_id"));
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  facts.cores = online > 0 ? static_cast<int>(online) : 1;

  // cpufreq's maximum (kHz) is the boost clock the core reaches under a one-core load, which is
  // how the engine runs one rank per core; it wins over the instantaneous /proc/cpuinfo figure.
  const std::string max_khz = trim(read_text("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"));
  if (!max_khz.empty()) {
    try {
      facts.clock_hz = std::stod(max_khz) * 1e3;
      facts.clock_source = "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq";
    } catch (const std::exception&) {
      facts.clock_hz = 0;
    }
  }
  apply_cpuinfo(read_text("/proc/cpuinfo"), facts);

  const std::string mem_kb = field(read_text("/proc/meminfo"), "MemTotal");
  if (!mem_kb.empty()) {
    try {
      facts.memory_bytes = std::stod(mem_kb) * 1024.0;
    } catch (const std::exception&) {
      facts.memory_bytes = 0;
    }
  }
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string level = trim(read_text(dir + "level"));
    if (level.empty()) continue;
    const double size = parse_cache_size(trim(read_text(dir + "size")));
    if (size > facts.last_level_cache_bytes) facts.last_level_cache_bytes = size;
  }
  return facts;
}

MeasuredHost measured_host(const HostFacts& facts) {
  return {facts.hostname, facts.machine_id, facts.boot_id, facts.cpu_model, facts.cores};
}

std::string other_host_reason(const std::optional<MeasuredHost>& file, const MeasuredHost& here) {
  if (!file) return "it does not say which host it was measured on: no measured_on key";
  if (file->hostname != here.hostname || file->machine_id != here.machine_id)
    return fmt::format("it was measured on host '{}', this is '{}'", file->hostname, here.hostname);
  if (file->cores != here.cores)
    return fmt::format("it was measured with {} cores, this host has {}", file->cores, here.cores);
  if (file->boot_id != here.boot_id) return "this host has rebooted since it was measured";
  return "";
}

}  // namespace ws
