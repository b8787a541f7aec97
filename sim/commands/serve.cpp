// `ultrasim serve`: a model served on the fabric from flags (sim/runs/serving_run.hpp runs it; workload
// files with "workload": "serving" give the same).
#include "sim/commands/arrival_flags.hpp"
#include "sim/commands/command.hpp"
#include "sim/engine/engines.hpp"
#include "sim/runs/production_run.hpp"
#include "sim/runs/serving_run.hpp"
#include "sim/runs/workloads.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "workloads/experiments/sweep.hpp"  // split_assignments

namespace ultrasim {
namespace {

struct ServeArgs {
  ServingConfig config;
  ProductionConfig production;
  ArrivalFlags arrivals;
  std::string kv_blocks, kv_fraction = "0.9";
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
  ProductionConfig& p = args.production;
  const ArrivalFlags& f = args.arrivals;
  p.requests_file = f.requests, p.generator.length_dist = f.length_dist;
  if (p.requests_file.empty() && f.rate.empty()) {
    if (!p.timeline.empty() || !p.per_request.empty())
      throw InputError("--timeline and --requests-out are for request arrivals (--requests or --rate)");
    return print_workload_result(run_serving(c, command, args.trace), args.format, serving_table);
  }
  if (!p.requests_file.empty() && !f.rate.empty())
    throw InputError("--requests and --rate are exclusive: a trace, or generated arrivals");
  p.serving = c;
  RequestGenerator& g = p.generator;
  if (!f.rate.empty()) {
    g.rate = with_context("--rate", [&] { return parse_ratio(f.rate); });
    g.count = static_cast<std::uint64_t>(
        with_context("--num-requests", [&] { return parse_count(f.num_requests); }));
    g.burstiness = with_context("--burstiness", [&] { return parse_ratio(f.burstiness); });
    g.input_len = c.input_len, g.output_len = c.output_len, g.lengths = c.lengths, g.seed = c.seed;
  }
  auto count = [](const std::string& option, const std::string& text) {
    return static_cast<std::uint64_t>(with_context(option, [&] { return parse_count(text); }));
  };
  p.options.max_batch = count("--max-batch", f.max_batch);
  p.options.token_budget = count("--token-budget", f.token_budget);
  if (!args.kv_blocks.empty()) p.kv_blocks = count("--kv-blocks", args.kv_blocks);
  p.kv_fraction = with_context("--kv-fraction", [&] { return parse_ratio(args.kv_fraction); });
  if (!f.slo_ttft.empty()) p.slo_ttft = with_context("--slo-ttft", [&] { return parse_time(f.slo_ttft); });
  if (!f.slo_tpot.empty()) p.slo_tpot = with_context("--slo-tpot", [&] { return parse_time(f.slo_tpot); });
  return print_workload_result(run_production(p, command, args.trace), args.format, production_table);
}

// The options of request arrivals (sim/runs/production_run.hpp): the shared ones, then serve's own.
void add_production_options(CLI::App& app, ServeArgs& a) {
  ProductionConfig& p = a.production;
  add_arrival_options(app, a.arrivals, "1000");
  app.add_option("--scheduler", p.scheduler,
                 "with arrivals: static | continuous (default) | chunked | disaggregated");
  app.add_option("--kv-blocks", a.kv_blocks,
                 "KV blocks of 16 tokens per data-parallel group (default: what HBM holds)");
  app.add_option("--kv-fraction", a.kv_fraction, "of HBM the weights and KV cache may use (default 0.9)");
  app.add_option("--prefill-chips", p.prefill_chips, "disaggregated: the first N chips prefill");
  app.add_option("--prefill-share", p.prefill_share,
                 "disaggregated: the first share of the chips prefill (0.25: a quarter)");
  app.add_option("--prefill-tp", p.prefill_tp, "disaggregated: the prefill pool's tp (default --tp)");
  app.add_flag("--exact-steps", p.exact_steps,
               "simulate every iteration's layers (default: the step-time model)");
  app.add_option("--grid-layers", p.grid_layers,
                 "the step-time model: MoE layers simulated per grid point (default 2)");
  app.add_option("--grid-cache", p.grid_cache,
                 "the step-time model: a directory where runs share their simulated points");
  app.add_option("--timeline", p.timeline, "with arrivals: write each iteration as a CSV row");
  app.add_option("--requests-out", p.per_request,
                 "with arrivals: write each request's times and latencies as a CSV row");
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
        CLI::Option* model = app.add_option("--model", a.model,
                                            "a built-in shape (ultrasim list models; default deepseek-v3)");
        app.add_option("--model-file", a.model_file,
                       "a model's shape as a JSON object (workloads/serving/README.md)")
            ->excludes(model);
        app.add_option("--tp", c.tp, "attention tensor parallelism (default 1)");
        app.add_option("--pp", c.pp, "pipeline stages (default 1)");
        app.add_option("--micro-batches", c.micro_batches,
                       "1, or 2: two halves overlap compute and communication");
        app.add_option("--placement", c.placement, "experts: contiguous (default) | round-robin | balanced");
        app.add_option("--replicate-hot", c.replicate_hot, "the K most popular experts get replicas");
        app.add_option("--replicas", c.replicas, "replicas per hot expert (default 1)");
        app.add_option("--batch", a.batch,
                       "requests per step: N, or sizes (1:1024:x2, 1,8,64): the frontier");
        CLI::Option* input_len =
            app.add_option("--input-len", a.input_len, "prompt tokens per request (default 1024)");
        CLI::Option* output_len =
            app.add_option("--output-len", a.output_len, "generated tokens per request (default 256)");
        app.add_option("--lengths", a.lengths,
                       "a file of input,output pairs the requests draw from (with --seed)")
            ->excludes(input_len)
            ->excludes(output_len);
        app.add_option("--phase", c.phase, "prefill | decode | both (default)");
        app.add_option("--router", c.router,
                       "random (default, drawn with --seed) | uniform (expected split)");
        CLI::Option* zipf =
            app.add_option("--zipf", a.zipf, "expert popularity exponent s (default: the model's)");
        app.add_option("--expert-load", a.expert_load, "measured load per expert: JSON array or CSV")
            ->excludes(zipf);
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
        add_production_options(app, a);
        app.add_option("--format", a.format, "table|json");
        return [args](const std::string& command_line) { return cmd_serve(*args, command_line); };
      }};
}

}  // namespace ultrasim
