// serve's options, declared once (topology/base/options.hpp): the flags of `ultrasim serve`, the fields of a
// "serving" workload file, `ultrasim list --format json` and the reference read this table.
#include "sim/engines/records.hpp"  // engine_option
#include "sim/machine/dtypes.hpp"
#include "topology/base/input_files.hpp"
#include "workloads/moe/moe_options.hpp"
#include "workloads/serving/model_options.hpp"
#include "workloads/serving/serving.hpp"

namespace ultrasim {
namespace {

using C = ServingConfig;

// The requests: batch sizes, lengths (fixed or drawn from a file), the phase.
void add_request_options(OptionTable<C>& t) {
  Option<C> batch{"batch",
                  "N, a list (1,8,64) or a series (1:1024:x2); in a file also an integer or an array",
                  "requests per step; several make the frontier", "assumption"};
  batch.set = [](C& c, const nlohmann::json& v, const std::string& where) {
    c.batch_sizes.clear();
    if (v.is_string() && v.get<std::string>().find_first_not_of("0123456789") != std::string::npos) {
      c.batch_sizes = with_context(where, [&] { return parse_batch_sizes(v.get<std::string>()); });
      return;
    }
    for (const auto& b : option_items(v)) c.batch_sizes.push_back(option_integer(b, where, 1, 1 << 24));
  };
  batch.value = [](const C& c) {
    return c.batch_sizes.size() == 1 ? nlohmann::json(c.batch_sizes[0]) : nlohmann::json(c.batch_sizes);
  };
  t.push_back(batch);
  t.push_back(
      integer_option("input_len", &C::input_len, 1, 1 << 24, "prompt tokens per request", "assumption"));
  t.push_back(
      integer_option("output_len", &C::output_len, 0, 1 << 24, "generated tokens per request", "assumption"));
  Option<C> lengths{"lengths", "file of input,output pairs (CSV, or a JSON array of pairs)",
                    "the requests' lengths, drawn with --seed", "none: --input-len and --output-len"};
  lengths.set = [](C& c, const nlohmann::json& v, const std::string& where) {
    c.lengths_source = option_text(v, where);
    c.lengths = read_lengths(c.lengths_source);
  };
  lengths.value = [](const C& c) {
    return c.lengths_source.empty() ? nlohmann::json() : nlohmann::json(c.lengths_source);
  };
  lengths.excludes = {"input_len", "output_len"};
  lengths.why = "the lengths file gives each request's";
  t.push_back(lengths);
  t.push_back(
      text_option("phase", &C::phase, {"prefill", "decode", "both"}, "the steps simulated", "assumption"));
}

// Multi-token prediction, the run's algorithm, chip and engine, the TPOT targets.
void add_run_options(OptionTable<C>& t) {
  t.push_back(integer_option("draft_tokens", &C::draft_tokens, 0, 16,
                             "multi-token prediction / speculative decoding: K drafted tokens per step",
                             "assumption: off"));
  t.push_back(integer_option("draft_layers", &C::draft_layers, 1, 64,
                             "layers the draft runs per drafted token",
                             "DeepSeek-V3 report: one MTP module"));
  t.push_back(number_option("acceptance", &C::acceptance, 0, 1, "a drafted token's acceptance rate",
                            "DeepSeek-V3 report 5.4.3: 85-90 % for the second token"));
  t.push_back(text_option("allreduce", &C::allreduce, {}, "algorithm of the tp all-reduce", "assumption"));
  Option<C> targets{"tpot_target", "time (50ms); repeat it, or a list in a file",
                    "a p99 TPOT: the best batch size that meets it", "none"};
  targets.set = [](C& c, const nlohmann::json& v, const std::string& where) {
    c.tpot_targets.clear();
    for (const auto& item : option_items(v)) c.tpot_targets.push_back(option_time(item, where));
  };
  targets.value = [](const C& c) { return nlohmann::json(c.tpot_targets); };
  targets.repeated = true;
  t.push_back(targets);
  t.push_back(text_option("chip", &C::chip, {},
                          "the chip profile: auto (by topology) | a name (ultrasim list chips) | FILE.json "
                          "(calibrate-chip -o)",
                          "workloads/serving/chips.cpp, per value"));
  t.push_back(
      engine_option<C>(&C::engine,
                       "contention-free where it proves exact, else fast (not simgrid: serve runs many "
                       "simulations in one process)"));
  t.push_back(
      integer_option("check_engine", &C::check_engine, 0, 1 << 20,
                     "N: also run the exchanges of the first N layers of the first step on the fast and "
                     "the exact flow engine; their largest relative difference (engine_check)",
                     "off"));
}

}  // namespace

const OptionTable<ServingConfig>& serving_options() {
  static const OptionTable<C> table = [] {
    OptionTable<C> t;
    t.push_back(
        text_option("topology", &C::topology, {}, "topology spec (ultrasim list topologies)", "assumption"));
    add_model_options(t, "deepseek-v3", "DeepSeek-V3 report (the default)");
    t.push_back(integer_option("tp", &C::tp, 1, 4096, "attention tensor parallelism", "assumption"));
    t.push_back(integer_option("pp", &C::pp, 1, 4096, "pipeline stages", "assumption"));
    t.push_back(integer_option("micro_batches", &C::micro_batches, 1, 2,
                               "1, or 2: two halves overlap compute and communication", "assumption"));
    add_request_options(t);
    Option<C> zipf =
        number_option("zipf", &C::zipf, 0, 100, "expert popularity exponent s", "the model's expert_zipf");
    zipf.unset = "the model's";
    t.push_back(zipf);
    for (auto& o : expert_routing_options<C>(
             "routed batches (and request draws) per batch size: p50 and p99 over them", 10000))
      t.push_back(std::move(o));
    Option<C> weights = text_option(
        "weight_dtype", &C::weight_dtype, {},
        "the weights' dtype, over the model's: bfloat16 | float8 | mxfp4 | nvfp4 | float4", "the model's");
    weights.unset = "the model's";
    t.push_back(weights);
    Option<C> kv = text_option("kv_dtype", &C::kv_dtype, {},
                               "the KV cache's dtype, over the model's: bfloat16 | float8", "the model's");
    kv.unset = "the model's";
    t.push_back(kv);
    // Set on the model itself (declared after model and model_file, so it applies to the one chosen).
    Option<C> activations{
        "activation_dtype", "a dtype (bfloat16 | float8 | float16 | float32)",
        "the activations' dtype, over the model's: attention inputs, tp all-reduces, pp sends",
        "the model's"};
    activations.set = [](C& c, const nlohmann::json& v, const std::string& where) {
      c.model.activation_dtype = option_text(v, where);
      with_context(where, [&] { return dtype_size(c.model.activation_dtype); });
    };
    activations.value = [](const C&) { return nlohmann::json(); };
    activations.unset = "the model's";
    t.push_back(activations);
    add_run_options(t);
    return t;
  }();
  return table;
}

}  // namespace ultrasim
