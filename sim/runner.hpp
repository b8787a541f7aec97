// Runs one prepared collective job in SimGrid: builds the platform, starts one actor per chip (running
// the algorithm) and one per switch, runs the engine, verifies the result. One call per process:
// SimGrid's engine cannot be reset.
#pragma once

#include <string>
#include <vector>

#include "collectives/collective.hpp"
#include "sim/fabric.hpp"
#include "workloads/collective_job.hpp"

namespace ultrasim {

struct RunOptions {
  std::string platform_file;  // load this exported SimGrid XML instead of building the platform
  bool record = false;        // keep a record per transfer and compute interval (traces)
  // Extra SimGrid settings "name:value", applied after ultrasim's own (advanced; may break exactness).
  std::vector<std::string> simgrid_config;
};

struct SimResult {
  double time_s = 0;  // when the last chip finished
  Verdict verdict;
  std::uint64_t transfers = 0, bytes_sent = 0;
  std::vector<TransferRecord> transfer_records;  // with RunOptions::record, sorted by (start, src, dst)
  std::vector<ComputeRecord> compute_records;
};

// Throws SimulationError when a chip is unreachable, an actor fails, or the run deadlocks (naming the
// chips still waiting); InputError for a bad platform file.
SimResult simulate(const PreparedJob& job, const RunOptions& options);

}  // namespace ultrasim
