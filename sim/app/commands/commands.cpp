#include "sim/app/commands/command.hpp"

namespace ultrasim {

// One row per command: X(f) names `Command f()`, defined in the command's own file; the order is the
// order of `ultrasim --help`.
#define ULTRASIM_COMMANDS(X) \
  X(list_command)            \
  X(topology_command)        \
  X(run_command)             \
  X(sweep_command)           \
  X(tune_command)            \
  X(calibrate_command)       \
  X(calibrate_chip_command)  \
  X(moe_command)             \
  X(serve_command)           \
  X(train_command)           \
  X(plan_command)            \
  X(workload_command)

#define ULTRASIM_DECLARE(f) Command f();
ULTRASIM_COMMANDS(ULTRASIM_DECLARE)
#undef ULTRASIM_DECLARE

const std::vector<Command>& commands() {
#define ULTRASIM_ROW(f) f(),
  static const std::vector<Command> kTable{ULTRASIM_COMMANDS(ULTRASIM_ROW)};
#undef ULTRASIM_ROW
  return kTable;
}

}  // namespace ultrasim
