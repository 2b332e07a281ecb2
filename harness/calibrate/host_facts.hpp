// What this host says about itself: CPU model, vector flags, clock, cores, memory, caches, and the
// fp32 peak of one core derived from them. Read from /proc and /sys; no measurement here.
#pragma once

#include <optional>
#include <string>

#include "sim/machine/machine.hpp"

namespace ws {

struct HostFacts {
  std::string hostname;
  std::string machine_id;       // /etc/machine-id (empty when absent)
  std::string boot_id;          // /proc/sys/kernel/random/boot_id: changes at every boot
  std::string cpu_model;        // /proc/cpuinfo "model name"
  int cores = 1;                // online logical CPUs (sysconf), the calibration's "devices"
  double clock_hz = 0;          // 0 when unknown
  std::string clock_source;     // where clock_hz came from
  std::string vector_isa;       // "avx512f", "avx2+fma", "sse" (from the cpuinfo flags)
  int fp32_lanes = 4;           // fp32 elements per vector register of that ISA
  int fma_units = 2;            // per core; not visible in /proc, see host_facts.cpp
  bool has_fma = false;
  double memory_bytes = 0;      // /proc/meminfo MemTotal
  double last_level_cache_bytes = 0;  // 0 when unknown

  // Flops per cycle per core: lanes x 2 (multiply + add) x FMA units (1 without FMA: one
  // multiply and one add pipe).
  double fp32_flops_per_cycle() const { return static_cast<double>(fp32_lanes) * 2.0 * fma_units; }
  // 0 when the clock is unknown: the caller falls back to the best measured rate.
  double fp32_peak_flops() const { return clock_hz * fp32_flops_per_cycle(); }
};

// Reads the running host. Missing files leave the defaults (and clock_hz = 0).
HostFacts read_host_facts();

// Which host these facts describe, as a calibrated machine file records it (`measured_on`).
MeasuredHost measured_host(const HostFacts& facts);

// Why a file measured on `file` (absent: the file does not say) does not describe the host `here`:
// another host name or machine id, another boot of it (a VM's speed moves between boots; the
// issue-46 VM ran at 0.65 of the committed file's speed), or another core count. Empty: the same
// host and boot.
std::string other_host_reason(const std::optional<MeasuredHost>& file, const MeasuredHost& here);

// Parses /proc/cpuinfo text and fills model, flags-derived ISA, lanes and clock (testable).
void apply_cpuinfo(const std::string& cpuinfo_text, HostFacts& facts);

}  // namespace ws
