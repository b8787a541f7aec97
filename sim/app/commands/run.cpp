// `ultrasim run`: one collective at one size (workloads/collective/collective_run.hpp runs it).
#include "sim/app/commands/command.hpp"
#include "sim/engines/engines.hpp"
#include "workloads/collective/collective_run.hpp"

namespace ultrasim {

Command run_command() {
  return {
      "run", "simulate one collective at one size", [](CLI::App& app) {
        auto args = std::make_shared<RunArgs>();
        RunArgs& a = *args;
        app.add_option("--topology", a.topology, "topology spec, e.g. trn3, switch:16")->required();
        app.add_option("--collective", a.collective, "collective name (ultrasim list collectives)")
            ->required();
        app.add_option("--algorithm", a.algorithm,
                       "algorithm name (ultrasim list algorithms), auto, or file:PATH (a JSON schedule)")
            ->required();
        app.add_option("--size", a.size, "size in bytes, units allowed: 1MiB, 64MB (alltoallv: uniform)");
        app.add_option("--traffic-matrix", a.traffic_matrix,
                       "alltoallv: per-pair bytes, JSON or CSV, row = sender (instead of --size)");
        app.add_option("--set", a.sets, "override a parameter, name=value (repeatable)");
        app.add_option("--check-engine", a.check_engine,
                       "1: also run the collective on the fast and the exact flow engine and report their "
                       "relative difference (engine_check)");
        add_stack_option(app, a.sets,
                         "software stack: ideal, nccl, neuron or a FILE.json (default: the topology's; "
                         "ultrasim list stacks)");
        app.add_option("--format", a.format, "table|json|csv");
        app.add_option("--trace", a.trace,
                       "write a Chrome/Perfetto trace to FILE (gzipped if it ends in .gz)");
        app.add_option("--flows", a.flows,
                       "write one JSON line per flow to FILE (gzipped if it ends in .gz)");
        app.add_option(
            "--trace-window", a.trace_window,
            "FROM:TO: only flows and computes overlapping this time window in --trace/--flows (10us:2ms)");
        app.add_option("--trace-chips", a.trace_chips,
                       "only these chips' events in --trace/--flows (0-7,72)");
        app.add_option("--trace-aggregate", a.trace_aggregate,
                       "none|step: one trace event per flow, or per chip, step and direction (default none)");
        app.add_flag(
            "--explain", a.explain,
            "explain the time: critical path, bounding links, busiest tiers and links, waiting chips");
        app.add_flag(
            "--no-link-stats", a.no_link_stats,
            "skip the link statistics (no \"links\" in JSON): faster and smaller on very large runs");
        app.add_option(
            "--link-stats", a.link_stats,
            "write every link direction's statistics (bytes, busy time, utilisation) to FILE, CSV");
        app.add_option(
            "--groups", a.groups,
            "run on groups of chips at once: server|rack|domain|blocks:N|tp|ep|dp|pp|chips:0-3/4-7");
        app.add_option("--layout", a.layout,
                       "parallelism layout for --groups tp|ep|dp|pp: tp=4,ep=1,dp=36,pp=1");
        app.add_option("--seed", a.seed, "random seed (recorded; these algorithms are deterministic)");
        app.add_option("--dtype", a.dtype, "element type for the count/type columns (default float32)");
        app.add_option("--platform", a.platform, "run on this exported SimGrid XML instead of building one");
        app.add_option("--engine", a.engine,
                       engine_help("contention-free where it proves exact, else flow, else SimGrid"));
        app.add_option("--fault", a.faults,
                       "inject a fault (repeatable): link-down:NAME@T[-T], switch-down:NAME@T[-T], "
                       "degrade:NAME=FRACTION[@T[-T]], slow-chip:RANK=FACTOR, late-chip:RANK@T");
        app.add_option(
            "--simgrid-cfg", a.simgrid_config,
            "extra SimGrid setting name:value after ultrasim's own (advanced; may break exactness)");
        return [args](const std::string& command_line) { return run_collective(*args, command_line); };
      }};
}

}  // namespace ultrasim
