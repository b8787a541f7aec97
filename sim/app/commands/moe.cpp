// `ultrasim moe`: an MoE layer from flags (workloads/moe/moe_run.hpp runs it; workload files give the same).
// The layer's options are moe_options() (workloads/moe/moe_options.hpp), declared once for the flags and the
// workload file; this file adds what is not the layer's: the engine, the outputs and --set.
#include "sim/app/commands/command.hpp"
#include "sim/app/commands/declared_options.hpp"
#include "sim/engines/engines.hpp"
#include "topology/base/suggest.hpp"
#include "workloads/experiments/sweep.hpp"  // split_assignments
#include "workloads/moe/moe_options.hpp"
#include "workloads/moe/moe_run.hpp"
#include "workloads/registry.hpp"

namespace ultrasim {
namespace {

struct MoeArgs {
  MoeRunRequest request;
  DeclaredFlags<MoeConfig> flags;
  std::string format = "table";
  std::vector<std::string> sets;
};

int cmd_moe(MoeArgs args, const std::string& command) {
  check_choice("format", args.format, {"table", "json"});
  MoeConfig& c = args.request.config;
  args.flags.apply(c);
  c.overrides = split_assignments(args.sets);
  args.request.command = command;
  return print_workload_result(run_moe(args.request), args.format, moe_table);
}

}  // namespace

Command moe_command() {
  return {
      "moe", "simulate an MoE layer: dispatch, expert compute, combine", [](CLI::App& app) {
        auto args = std::make_shared<MoeArgs>();
        MoeArgs& a = *args;
        a.flags.add(app, moe_options());
        app.add_option("--check-engine", a.request.check_engine,
                       "N: also run the layers of the first N batches on the fast and the exact flow engine "
                       "and report their largest relative difference (engine_check)");
        app.add_option("--set", a.sets, "override a parameter, name=value (topology, model, chip, price)");
        add_stack_option(app, a.sets,
                         "software stack: ideal, nccl, neuron or a FILE.json (default: the topology's)");
        app.add_option("--engine", a.request.engine,
                       engine_help("contention-free where it proves exact, else flow (one layer) or fast "
                                   "(--batches above 1), else SimGrid"));
        app.add_option("--trace", a.request.trace, "write the first batch's Perfetto trace to FILE");
        app.add_option("--traffic-out", a.request.traffic,
                       "write the first batch's dispatch matrix (run --traffic-matrix reads it)");
        app.add_option("--format", a.format, "table|json");
        return [args](const std::string& command_line) { return cmd_moe(*args, command_line); };
      }};
}

}  // namespace ultrasim
