// Runs a program on a machine (workloads/program.hpp) with the engine RunOptions::engine chooses: the
// contention-free one (sim/engine/uncontended.hpp) where it proves exact, or SimGrid, which builds the
// platform, starts one actor per chip (running the program) and one per switch, and runs. Ends with the
// program's verdict. One SimGrid run per process: SimGrid's engine cannot be reset (ChildRun runs more).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collectives/collective.hpp"
#include "sim/engine/records.hpp"
#include "workloads/collective_job.hpp"

namespace ultrasim {

// Throws SimulationError when a chip is unreachable (from the start, or cut off by link faults: naming
// the chips and the failed elements), an actor fails, or the run deadlocks (naming the chips still
// waiting); InputError for a bad platform file or faults the chosen engine cannot model.
SimResult simulate(const Machine& machine, Program& program, const RunOptions& options);
// A prepared collective job, as its CollectiveProgram (workloads/collective_program.hpp).
SimResult simulate(const PreparedJob& job, const RunOptions& options);

// --check-engine N: N of a workload's exchanges run on the fast and on the exact flow engine, and the
// largest relative difference of their times, so that a user can check the fast engine on their fabric.
struct EngineCheck {
  int exchanges = 0;
  double max_rel_diff = 0;  // |fast - exact| / exact, the largest
  std::string worst;        // the exchange it was found on
  double worst_fast_s = 0, worst_exact_s = 0;
  // Runs `program` on `machine` on both engines (records off) and keeps the difference of their times.
  void add(const std::string& what, const Machine& machine, Program& program);
};

// A number computed in a child process (SimGrid runs once per process, so further simulations fork):
// start() forks and runs `work` there; finish() waits and returns its value, nullopt if the child failed
// (threw, or could not start).
class ChildRun {
 public:
  static ChildRun start(const std::function<double()>& work);
  std::optional<double> finish();
  // The same for work that computes several numbers (at most 4096).
  static ChildRun start_values(const std::function<std::vector<double>()>& work);
  std::optional<std::vector<double>> finish_values();

 private:
  int pid_ = -1, fd_ = -1;
};

// The time of the same run without its faults (job.faults ignored), for the slowdown they cause.
// Simulates in a child process (one simulation per process), so call it before simulate(); nullopt if
// that run failed.
std::optional<double> fault_free_time(Machine& machine, Program& program, const RunOptions& options);
std::optional<double> fault_free_time(PreparedJob& job, const RunOptions& options);

}  // namespace ultrasim
