// simulate(): runs a program on a machine (sim/machine/program.hpp) on the engine RunOptions::engine names
// (a row of engines.hpp), or under auto, the one engine policy: the contention-free engine where it proves
// exact, else the contended engine the workload names (flow, or fast where thousands of exchanges are
// simulated), else SimGrid. Ends with the program's verdict. Beside it: --check-engine (EngineCheck), and
// child processes: one SimGrid run per process (SimGrid's engine cannot be reset), so further simulations
// fork (ChildRun, and run_in_children, the one pool for independent simulations).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collectives/collective.hpp"
#include "sim/engines/records.hpp"
#include "sim/machine/program.hpp"

namespace ultrasim {

// Throws SimulationError when a chip is unreachable (from the start, or cut off by link faults: naming
// the chips and the failed elements), an actor fails, or the run deadlocks (naming the chips still
// waiting); InputError for a bad platform file or faults the chosen engine cannot model.
SimResult simulate(const Machine& machine, Program& program, const RunOptions& options);

// The approximate engine for a program where thousands of exchanges are simulated: the traffic-matrix
// engine for a chain of all-to-allv exchanges (Program::matrix_form), the fast engine otherwise. What
// auto runs when RunOptions::contended is fast, and what --check-engine checks.
Engine approximate_engine(const Program& program);

// --check-engine N: N of a workload's exchanges run on their approximate engine (approximate_engine: fast,
// or matrix) and on the exact flow engine, and the largest relative difference of their times, so that a
// user can check the approximate engine on their fabric.
struct EngineCheck {
  Engine engine = Engine::kFast;  // the approximate engine checked (the least exact, if several)
  int exchanges = 0;
  // Of those, the ones whose flows meet: the others the contention-free engine runs exactly under auto,
  // and no approximate engine ever prices them (nothing to check; the difference is then not reported).
  int contended = 0;
  double max_rel_diff = 0;                     // |fast - exact| / exact, the largest
  std::string worst;                           // the exchange it was found on
  double worst_fast_s = 0, worst_exact_s = 0;  // the approximate engine's time, the flow engine's
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

// How many children run at once by default: as many as there are cores (at least one).
std::size_t child_jobs();

// The one pool of child processes for independent simulations (SimGrid runs once per process, and
// separate simulations use every core): work(i) for i in [0, n), each in a child, at most `jobs` at once
// (0: child_jobs()), collected in index order; returns their values in that order. A child
// that fails (threw, could not start, or gave values `accept` refuses) ends the pool: the children still
// running are waited for, then failed(i) is called with the first such index in order; it throws the
// workload's own error (if it returns, the pool throws SimulationError "a child process failed").
std::vector<std::vector<double>> run_in_children(
    std::size_t n, const std::function<std::vector<double>(std::size_t)>& work,
    const std::function<void(std::size_t)>& failed,
    const std::function<bool(const std::vector<double>&)>& accept = nullptr, std::size_t jobs = 0);

// The time of the same run without its faults (job.faults ignored), for the slowdown they cause.
// Simulates in a child process (one simulation per process), so call it before simulate(); nullopt if
// that run failed.
std::optional<double> fault_free_time(Machine& machine, Program& program, const RunOptions& options);

}  // namespace ultrasim
