// `ultrasim moe`: an MoE layer from flags (sim/runs/moe_run.hpp runs it; workload files give the same).
#include "sim/commands/command.hpp"
#include "sim/engine/engines.hpp"
#include "sim/runs/moe_run.hpp"
#include "sim/runs/workloads.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "workloads/experiments/sweep.hpp"

namespace ultrasim {
namespace {

struct MoeArgs {
  MoeRunRequest request;
  std::string tokens, hidden, ffn, zipf = "0", capacity = "unlimited", seed = "0", expert_load,
                                   format = "table";
  std::vector<std::string> sets;
  bool no_dedup = false;
};

int cmd_moe(MoeArgs args, const std::string& command) {
  check_choice("format", args.format, {"table", "json"});
  MoeConfig& c = args.request.config;
  c.tokens_per_chip = with_context("--tokens-per-chip", [&] { return parse_count(args.tokens); });
  c.hidden = with_context("--hidden", [&] { return parse_count(args.hidden); });
  if (!args.ffn.empty()) c.ffn = with_context("--ffn", [&] { return parse_count(args.ffn); });
  c.zipf = with_context("--zipf", [&] { return parse_ratio(args.zipf); });
  if (args.capacity != "unlimited")
    c.capacity_factor = with_context("--capacity-factor", [&] { return parse_ratio(args.capacity); });
  c.seed = with_context("--seed", [&] { return parse_seed(args.seed); });
  c.dedup = !args.no_dedup;
  c.overrides = split_assignments(args.sets);
  if (!args.expert_load.empty()) {
    c.expert_load = read_expert_load(args.expert_load);
    c.expert_load_source = args.expert_load;
  }
  args.request.command = command;
  return print_workload_result(run_moe(args.request), args.format, moe_table);
}

}  // namespace

Command moe_command() {
  return {
      "moe", "simulate an MoE layer: dispatch, expert compute, combine", [](CLI::App& app) {
        auto args = std::make_shared<MoeArgs>();
        MoeArgs& a = *args;
        MoeConfig& mc = a.request.config;
        app.add_option("--topology", mc.topology, "topology spec (default trn3)");
        app.add_option("--experts", mc.experts, "routed experts E")->required();
        app.add_option("--top-k", mc.top_k, "experts per token k")->required();
        app.add_option("--tokens-per-chip", a.tokens, "tokens in the batch on each chip N")->required();
        app.add_option("--hidden", a.hidden, "model dimension H")->required();
        app.add_option("--ffn", a.ffn, "an expert's intermediate dimension F (default H)");
        app.add_option("--router", mc.router, "uniform (expected split) | random (drawn with --seed)");
        CLI::Option* zipf = app.add_option("--zipf", a.zipf, "expert popularity exponent s (0: uniform)");
        app.add_option("--expert-load", a.expert_load, "measured load per expert: JSON array or CSV")
            ->excludes(zipf);
        app.add_option("--capacity-factor", a.capacity, "C, or unlimited (default)");
        app.add_option("--max-nodes-per-token", mc.max_nodes,
                       "node-limited routing: a token's experts on at most M nodes (random router)");
        app.add_option("--node-chips", mc.node_chips, "chips per node, for --max-nodes-per-token");
        app.add_flag("--no-dedup", a.no_dedup, "send a token once per expert, not once per chip");
        app.add_option("--dispatch-dtype", mc.dispatch_dtype,
                       "element of dispatched tokens (default float8)");
        app.add_option("--combine-dtype", mc.combine_dtype, "element of combined outputs (default bfloat16)");
        app.add_option("--weight-dtype", mc.weight_dtype, "element of expert weights (default float8)");
        app.add_option("--micro-chunks", mc.micro_chunks,
                       "pipeline the layer in this many chunks (default 1)");
        app.add_option("--replicate-hot", mc.replicate_hot,
                       "give the K most popular experts --replicas replicas each");
        app.add_option("--placement", mc.placement,
                       "contiguous (default) | round-robin | balanced (greedy, hot experts replicated)");
        app.add_option("--replicas", mc.replicas, "replicas per hot expert (default 1)");
        app.add_option("--batches", mc.batches, "batches, routing drawn afresh each (random): p50/p99/max");
        app.add_option("--check-engine", a.request.check_engine,
                       "N: also run the layers of the first N batches on the fast and the exact flow engine "
                       "and report their largest relative difference (engine_check)");
        app.add_option("--seed", a.seed, "random seed of the router (default 0)");
        app.add_option("--set", a.sets, "override a parameter, name=value (topology, model, chip, price)");
        add_stack_option(app, a.sets,
                         "software stack: ideal, nccl, neuron or a FILE.json (default: the topology's)");
        app.add_option("--engine", a.request.engine, engine_choices());
        app.add_option("--trace", a.request.trace, "write the first batch's Perfetto trace to FILE");
        app.add_option("--traffic-out", a.request.traffic,
                       "write the first batch's dispatch matrix (run --traffic-matrix reads it)");
        app.add_option("--format", a.format, "table|json");
        return [args](const std::string& command_line) { return cmd_moe(*args, command_line); };
      }};
}

}  // namespace ultrasim
