// The SimGrid engine: builds the platform of a machine (or loads a --platform file), starts one actor per
// chip running the program over the fabric (sim/engines/simgrid/fabric.hpp) and one per switch, applies the
// planned faults in their time, runs SimGrid, and ends with the program's verdict. One SimGrid run per
// process: SimGrid's engine cannot be reset. The run driver (sim/engines/runner.hpp) chooses this engine
// or the contention-free one.
#pragma once

#include "sim/engines/records.hpp"
#include "sim/machine/program.hpp"

namespace ultrasim {

// Throws SimulationError when a chip is unreachable (from the start, or cut off by link faults), an
// actor fails, or the run deadlocks; InputError for a bad platform file, a --platform file with link
// faults, or a --simgrid-cfg setting SimGrid refuses.
SimResult simulate_simgrid(const Machine& machine, Program& program, const RunOptions& options);

}  // namespace ultrasim
