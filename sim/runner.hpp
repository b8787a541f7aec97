// Runs one prepared collective job with the engine RunOptions::engine chooses: the contention-free one
// (sim/uncontended.hpp) where it proves exact, or SimGrid, which builds the platform, starts one actor
// per chip (running the algorithm) and one per switch, and runs. Verifies the result. One call per
// process: SimGrid's engine cannot be reset.
#pragma once

#include <string>
#include <vector>

#include "collectives/collective.hpp"
#include "sim/records.hpp"
#include "workloads/collective_job.hpp"

namespace ultrasim {

// Throws SimulationError when a chip is unreachable, an actor fails, or the run deadlocks (naming the
// chips still waiting); InputError for a bad platform file.
SimResult simulate(const PreparedJob& job, const RunOptions& options);

}  // namespace ultrasim
