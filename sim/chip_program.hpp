// What every engine does with a prepared job apart from moving bytes: the program each chip runs (its
// buffer layout, the algorithm) and the result once every chip has stopped (failures, deadlock, the
// semantic verdict). The SimGrid engine (runner.cpp) and the contention-free one (uncontended.cpp) share it.
#pragma once

#include <string>
#include <vector>

#include "sim/records.hpp"
#include "workloads/collective_job.hpp"

namespace ultrasim {

// What the chips left behind: their final slots, when each finished (-1: never), what failed.
struct ChipOutcomes {
  explicit ChipOutcomes(int p) : finals(p), finish(p, -1.0) {}
  std::vector<std::vector<Contribution>> finals;
  std::vector<double> finish;
  std::vector<std::string> failures;  // "chip3: what went wrong"
};

// Runs the job's algorithm as chip transport.rank() over `transport`, storing its final slots and its
// finish time (transport.now()) in `out`. A late chip (job.faults) first idles until its start (a
// "late start" compute interval); a slow one's computations take its factor x longer. An exception is
// recorded in out.failures, not thrown (one escaping a SimGrid actor aborts the process).
void run_chip(const PreparedJob& job, Transport& transport, ChipOutcomes& out);

// The run's result: time = the last chip's finish, the verdict, the records sorted by (start, src, dst,
// step, path). Throws SimulationError if a chip failed, or if some chip never finished (a deadlock,
// naming the first such chip and the first of `unmatched_receives`).
SimResult conclude(const PreparedJob& job, const ChipOutcomes& out,
                   const std::vector<std::string>& unmatched_receives, SimResult result);

}  // namespace ultrasim
