// What every engine does with a machine and a program (sim/machine/program.hpp) apart from moving bytes:
// run each chip's part with its stragglers' faults, and the result once every chip has stopped (failures,
// deadlock, the program's verdict). Every engine shares it: the contention-free one
// (contention_free/uncontended.cpp), the flow and fast ones (flow/flow_engine.cpp) and SimGrid's
// (simgrid/simgrid_engine.cpp).
#pragma once

#include <string>
#include <vector>

#include "sim/engines/records.hpp"
#include "sim/machine/program.hpp"

namespace ultrasim {

// What the chips left behind: when each finished (-1: never), what failed.
struct ChipOutcomes {
  explicit ChipOutcomes(int p) : finish(p, -1.0) {}
  std::vector<double> finish;
  std::vector<std::string> failures;  // "chip3: what went wrong"
};

// Runs chip transport.rank()'s part of `program` over `transport`, storing its finish time
// (transport.now()) in `out`. A late chip (machine.faults) first idles until its start (a "late start"
// compute interval); a slow one's computations take its factor x longer. A chip that takes no part
// finishes at once. An exception is recorded in out.failures, not thrown (one escaping a SimGrid actor
// aborts the process).
void run_chip(const Machine& machine, Program& program, Transport& transport, ChipOutcomes& out);

// The run's result: time = the last chip's finish, the program's verdict, the records sorted by (start,
// src, dst, step, path). Throws SimulationError if a chip failed, or if some chip never finished (a
// deadlock, naming the first such chip and the first of `unmatched_receives`).
// Sorts records as every result holds them: by (start, src, dst, step, path).
void sort_records(std::vector<TransferRecord>& records);

SimResult conclude(const Machine& machine, const Program& program, const ChipOutcomes& out,
                   const std::vector<std::string>& unmatched_receives, SimResult result);

}  // namespace ultrasim
