// `ultrasim train`: a training step from a model and a parallel layout (workloads/training/train_run.hpp runs
// it; a "train" workload file gives the same). The step's options are train_options(), declared once for
// the flags and the workload file; this file adds what is not the step's: the outputs and --set.
#include "sim/app/commands/command.hpp"
#include "sim/app/commands/declared_options.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/suggest.hpp"
#include "workloads/experiments/sweep.hpp"  // split_assignments
#include "workloads/training/train_run.hpp"
#include "workloads/training/train_search.hpp"

namespace ultrasim {
namespace {

struct TrainArgs {
  TrainRequest request;
  DeclaredFlags<TrainConfig> flags;
  std::string format = "table";
  std::vector<std::string> sets;
  bool search = false;
};

int cmd_train(TrainArgs args, const std::string& command) {
  check_choice("format", args.format, {"table", "json"});
  TrainConfig& c = args.request.config;
  args.flags.apply(c);
  c.overrides = split_assignments(args.sets);
  args.request.command = command;
  if (args.search) {
    if (!args.request.trace.empty()) throw InputError("--trace traces one step; give it without --search");
    return print_workload_result(search_train_layouts(args.request), args.format, train_search_table);
  }
  return print_workload_result(run_train(args.request), args.format, train_table);
}

}  // namespace

Command train_command() {
  return {"train", "simulate a training step: a model, a parallel layout, a pipeline schedule",
          [](CLI::App& app) {
            auto args = std::make_shared<TrainArgs>();
            TrainArgs& a = *args;
            a.flags.add(app, train_options());
            app.add_option("--set", a.sets, "override a parameter, name=value (topology, chip, price)");
            add_stack_option(app, a.sets,
                             "software stack: ideal, nccl, neuron or a FILE.json (default: the topology's)");
            app.add_option("--trace", a.request.trace,
                           "write the step's Perfetto trace (a track per pipeline rank) to FILE");
            app.add_flag(
                "--search", a.search,
                "try every layout (tp, pp, ep, schedule; the least recompute that fits) and rank them: "
                "the best layout");
            app.add_option("--format", a.format, "table|json");
            return [args](const std::string& command_line) { return cmd_train(*args, command_line); };
          }};
}

}  // namespace ultrasim
