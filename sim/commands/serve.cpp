// `ultrasim serve`: a model served on the fabric from flags (sim/runs/serving_run.hpp runs it; workload
// files with "workload": "serving" give the same).
#include "sim/commands/command.hpp"
#include "sim/engine/engines.hpp"
#include "sim/runs/serving_run.hpp"
#include "sim/runs/workloads.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "workloads/experiments/sweep.hpp"  // split_assignments

namespace ultrasim {
namespace {

struct ServeArgs {
  ServingConfig config;
  std::string model = "deepseek-v3", model_file, batch = "1", input_len = "1024", output_len = "256", lengths,
              zipf, capacity, expert_load, seed = "0", format = "table", trace, acceptance;
  std::vector<std::string> sets, targets;
};

int cmd_serve(ServeArgs args, const std::string& command) {
  check_choice("format", args.format, {"table", "json"});
  ServingConfig& c = args.config;
  if (!args.model_file.empty()) {
    const std::string text =
        read_input_file(args.model_file, "model file", "a JSON object of a model's shape");
    const nlohmann::json j = parse_json_text(text, "model file '" + args.model_file + "'");
    c.model = model_from_json(j, "model file '" + args.model_file + "'");
  } else {
    c.model = with_context("--model", [&] { return model_from_json(args.model, "--model"); });
  }
  c.batch_sizes = parse_batch_sizes(args.batch);
  if (!args.lengths.empty()) {
    c.lengths = read_lengths(args.lengths);
    c.lengths_source = args.lengths;
  } else {
    c.input_len = with_context("--input-len", [&] { return parse_count(args.input_len); });
    c.output_len = args.output_len == "0"
                       ? 0
                       : with_context("--output-len", [&] { return parse_count(args.output_len); });
  }
  if (!args.zipf.empty()) c.zipf = with_context("--zipf", [&] { return parse_ratio(args.zipf); });
  if (!args.capacity.empty() && args.capacity != "unlimited")
    c.capacity_factor = with_context("--capacity-factor", [&] { return parse_ratio(args.capacity); });
  if (!args.expert_load.empty()) {
    c.expert_load = read_expert_load(args.expert_load);
    c.expert_load_source = args.expert_load;
  }
  c.seed = with_context("--seed", [&] { return parse_seed(args.seed); });
  if (!args.acceptance.empty())
    c.acceptance = with_context("--acceptance", [&] { return parse_ratio(args.acceptance); });
  for (const auto& t : args.targets)
    c.tpot_targets.push_back(with_context("--tpot-target", [&] { return parse_time(t); }));
  c.overrides = split_assignments(args.sets);
  return print_workload_result(run_serving(c, command, args.trace), args.format, serving_table);
}

}  // namespace

Command serve_command() {
  return {
      "serve", "simulate serving a model: prefill (TTFT) and decode (TPOT) steps, layer by layer",
      [](CLI::App& app) {
        auto args = std::make_shared<ServeArgs>();
        ServeArgs& a = *args;
        ServingConfig& c = a.config;
        app.add_option("--topology", c.topology, "topology spec (default trn3)");
        app.add_option("--model", a.model, "a built-in shape (ultrasim list models; default deepseek-v3)");
        app.add_option("--model-file", a.model_file,
                       "a model's shape as a JSON object (workloads/serving/README.md)");
        app.add_option("--tp", c.tp, "attention tensor parallelism (default 1)");
        app.add_option("--pp", c.pp, "pipeline stages (default 1)");
        app.add_option("--micro-batches", c.micro_batches,
                       "1, or 2: two halves overlap compute and communication");
        app.add_option("--placement", c.placement, "experts: contiguous (default) | round-robin | balanced");
        app.add_option("--replicate-hot", c.replicate_hot, "the K most popular experts get replicas");
        app.add_option("--replicas", c.replicas, "replicas per hot expert (default 1)");
        app.add_option("--batch", a.batch,
                       "requests per step: N, or sizes (1:1024:x2, 1,8,64): the frontier");
        app.add_option("--input-len", a.input_len, "prompt tokens per request (default 1024)");
        app.add_option("--output-len", a.output_len, "generated tokens per request (default 256)");
        app.add_option("--lengths", a.lengths,
                       "a file of input,output pairs the requests draw from (with --seed)");
        app.add_option("--phase", c.phase, "prefill | decode | both (default)");
        app.add_option("--router", c.router,
                       "random (default, drawn with --seed) | uniform (expected split)");
        app.add_option("--zipf", a.zipf, "expert popularity exponent s (default: the model's)");
        app.add_option("--expert-load", a.expert_load, "measured load per expert: JSON array or CSV");
        app.add_option("--capacity-factor", a.capacity, "C, or unlimited (default)");
        app.add_option("--max-nodes-per-token", c.max_nodes,
                       "node-limited routing: a token's experts on at most M nodes (random router)");
        app.add_option("--node-chips", c.node_chips, "chips per node, for --max-nodes-per-token");
        app.add_option("--weight-dtype", c.weight_dtype,
                       "the weights' dtype, over the model's: bfloat16 | float8 | mxfp4 | nvfp4 | float4");
        app.add_option("--kv-dtype", c.kv_dtype, "the KV cache's dtype, over the model's: bfloat16 | float8");
        app.add_option(
            "--draft-tokens", c.draft_tokens,
            "multi-token prediction / speculative decoding: K drafted tokens per step (default 0)");
        app.add_option("--draft-layers", c.draft_layers,
                       "layers the draft runs per drafted token (default 1)");
        app.add_option("--acceptance", a.acceptance,
                       "a drafted token's acceptance rate in [0, 1] (default 0.85)");
        app.add_option("--batches", c.batches,
                       "routed batches per batch size: p50 and p99 over them (default 1)");
        app.add_option("--seed", a.seed, "random seed of the router and the lengths (default 0)");
        app.add_option("--allreduce", c.allreduce, "algorithm of the tp all-reduce (default auto)");
        app.add_option("--tpot-target", a.targets, "a p99 TPOT (50ms): the best batch size that meets it");
        app.add_option("--chip", c.chip,
                       "the chip profile: auto (by topology) | a name (ultrasim list chips) | FILE.json "
                       "(calibrate-chip -o)");
        app.add_option("--set", a.sets, "override a parameter, name=value (topology, model, chip, price)");
        add_stack_option(app, a.sets,
                         "software stack: ideal | nccl | neuron | FILE.json (default: the topology's)");
        app.add_option("--check-engine", c.check_engine,
                       "N: also run the exchanges of the first N layers (MoE layers, tp all-reduces) of the "
                       "first step on the fast and the exact flow engine; their largest relative difference "
                       "(engine_check)");
        app.add_option(
            "--engine", c.engine,
            engine_choices() + " but simgrid; auto: contention-free where it proves exact, else fast");
        app.add_option("--trace", a.trace,
                       "write a Perfetto trace of batch 0's step at the first batch size");
        app.add_option("--format", a.format, "table|json");
        return [args](const std::string& command_line) { return cmd_serve(*args, command_line); };
      }};
}

}  // namespace ultrasim
