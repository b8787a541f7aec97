// The collective workload: one collective at one size on one topology (`ultrasim run`, and workload files
// with "workload": "collective"). Simulates it, prints the result in the asked format, writes the asked
// trace, flow records and link statistics.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engines/runner.hpp"
#include "workloads/collective/collective_job.hpp"

namespace ultrasim {

// A prepared collective job run as its CollectiveProgram (simulate(), sim/engines/runner.hpp).
SimResult simulate(const PreparedJob& job, const RunOptions& options);
// Its time without its faults (fault_free_time(), sim/engines/runner.hpp).
std::optional<double> fault_free_time(PreparedJob& job, const RunOptions& options);

// The words of one collective run, as `ultrasim run` takes them (each field is the option of that name).
struct RunArgs {
  std::string topology, collective, algorithm, size, format = "table", trace, dtype = "float32", platform;
  std::string traffic_matrix;  // alltoallv: the matrix file, instead of --size
  std::string engine = "auto";
  std::vector<std::string> sets, simgrid_config, faults;
  std::string seed = "0";
  std::string link_stats;  // --link-stats FILE: every link direction's statistics, CSV
  bool explain = false;
  int check_engine = 0;        // --check-engine 1: the collective on the fast and the exact engine too
  bool no_link_stats = false;  // skip them (and the records they need, unless tracing): the fastest run
  std::string flows;           // --flows FILE: one JSON line per flow record
  std::string groups, layout;  // --groups SPEC, --layout tp=..: the collective on groups of chips
  std::string trace_window, trace_chips, trace_aggregate = "none";  // bound traces and flow records
};

// Runs it and prints the result on standard output in args.format (table, json or csv); returns the exit
// status (0, or 3 when it did not verify). Throws InputError for bad words, SimulationError when the run
// cannot complete.
int run_collective(const RunArgs& args, const std::string& command);

// The fields of a collective workload file (all strings unless said): topology, collective, algorithm,
// size (a number of bytes or a string with units), traffic_matrix, dtype, seed (a whole number), engine,
// groups, layout, faults (a list of --fault specs), set (an object). Throws InputError naming the field.
RunArgs collective_args_from_json(const nlohmann::json& workload, const std::string& file);

}  // namespace ultrasim
