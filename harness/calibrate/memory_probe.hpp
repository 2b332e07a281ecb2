// STREAM-triad memory bandwidth (a[i] = b[i] + s c[i] on doubles) of one core alone and of all
// cores at once, on arrays much larger than the last-level cache.
#pragma once

namespace ws {

struct MemoryMeasurements {
  double array_bytes = 0;  // per array, split evenly between threads in the all-cores run
  int repetitions = 0;
  int threads = 1;         // in the all-cores run
  double one_core_bytes_per_s = 0;
  double all_cores_bytes_per_s = 0;  // the whole host
};

// Bytes counted as STREAM does: 3 x 8 bytes per element (two reads, one write; the write-allocate
// read is not counted). Best of `repetitions` passes after one untimed pass that first-touches the
// pages. One core alone is timed in thread CPU time (thread_cpu_clock.hpp); in the all-cores run
// each thread owns its slice, passes start together, and a pass lasts (wall time) until the
// slowest thread ends.
MemoryMeasurements measure_memory_bandwidth(double array_bytes, int threads, int repetitions);

}  // namespace ws
