// The engines, one table: `--engine` (parse_engine, with "did you mean"), `ultrasim list engines`, the
// generated reference (sim/REFERENCE.md) and simulate() (sim/engines/runner.hpp) all read it. An engine is
// a function that runs a program on a machine (sim/machine/program.hpp) and a row that says what it models,
// what it declines, its error against the exact engines and what a flow in flight costs it. A new engine
// is its file and its row (kFast: sim/engines/flow/fast_engine.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/engines/records.hpp"
#include "sim/machine/program.hpp"

namespace ultrasim {

// What an engine gives back: the result, or why it declined (`declined` non-empty: something it does not
// model, which `auto` hands to another engine), or that the run itself failed (`failed`: a chip failed or
// the run deadlocked; `declined` is then simulate()'s SimulationError text).
struct EngineOutcome {
  std::optional<SimResult> result;
  std::string declined;
  bool failed = false;
};

// Runs `program` on `machine` (options.record: keep the records). Engines other than SimGrid never see a
// platform file, SimGrid settings or link faults: simulate() sends those to SimGrid.
using EngineRun = EngineOutcome (*)(const Machine& machine, Program& program, const RunOptions& options);

struct EngineEntry {
  Engine id;
  std::string name;
  std::string description;  // one line: what it computes
  std::string declines;     // what it does not model (auto then hands the run on)
  std::string error;        // against SimGrid's max-min times, the exact reference
  double bytes_per_flow;    // memory per flow in flight (sim/machine/memory_guard.hpp), 0 for auto
  bool exact;               // its times are SimGrid's (to rounding)
  EngineRun run;            // nullptr for auto, which chooses among the others
};

// Every engine, auto first.
const std::vector<EngineEntry>& engine_table();
const EngineEntry& engine_entry(Engine engine);

// Of two engines that computed parts of one result, the one the result names: the least exact, in the
// order contention-free, flow, SimGrid, fast, matrix (a result that used an approximate engine anywhere
// says so).
Engine least_exact(Engine a, Engine b);

// The engines' own functions, one per row.
EngineOutcome run_contention_free(const Machine& machine, Program& program, const RunOptions& options);
EngineOutcome run_flow(const Machine& machine, Program& program, const RunOptions& options);
EngineOutcome run_fast(const Machine& machine, Program& program, const RunOptions& options);
EngineOutcome run_matrix(const Machine& machine, Program& program, const RunOptions& options);
EngineOutcome run_simgrid(const Machine& machine, Program& program, const RunOptions& options);

}  // namespace ultrasim
