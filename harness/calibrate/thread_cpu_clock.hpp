// Seconds of CPU time the calling thread has run (CLOCK_THREAD_CPUTIME_ID). Single-threaded probes
// time themselves with it so that, on a host shared with other work, the time their core spent on
// other processes is not counted as GEMM or memory time; on a quiet host it equals wall time.
#pragma once

#include <time.h>

namespace ws {

inline double thread_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace ws
