// Times several probes pass after pass instead of one after the other. On a shared or virtual host
// the speed drifts by 10-20 % over seconds (this project's 2-core VM: one-core sgemm 512^3 between
// 60 and 86 GFLOP/s in 0.25 s windows over 30 s); timed back to back, each figure is a snapshot of
// a different moment and the table mixes fast and slow moments at random. Interleaved, every
// figure's median spans the same stretch of time, so the figures agree with each other and with
// the engine's average over a run.
#pragma once

#include <functional>
#include <vector>

namespace ws {

// One probe: does its work once and returns the seconds one call took (thread CPU time). Its first
// call is a warm-up (page faults, caches, batch sizing) and is not counted.
using TimedProbe = std::function<double()>;

// Calls every probe once untimed, then `passes` times in turn (probe 0, 1, ..., 0, 1, ...), and
// returns each probe's median seconds per call, in the probes' order.
std::vector<double> interleaved_median_seconds(const std::vector<TimedProbe>& probes, int passes);

}  // namespace ws
