// The options of an MoE layer (`ultrasim moe`, "workload": "moe"), declared once (topology/base/options.hpp),
// and the expert-routing options `moe` and `serve` share: one template over the config, which both
// MoeConfig and ServingConfig fill with the same typed fields.
#pragma once

#include "topology/base/options.hpp"
#include "workloads/moe/moe.hpp"

namespace ultrasim {

// moe's table: the layer's shape, its routing (expert_routing_options), its execution.
const OptionTable<MoeConfig>& moe_options();

// An expert load: a file (JSON array or CSV, read_expert_load) or, in a workload file, an array of
// numbers >= 0; `where` names it in errors.
std::pair<std::vector<double>, std::string> option_expert_load(const nlohmann::json& v,
                                                               const std::string& where);

// What routes a token to its experts and where the experts live, for any config with the fields `moe`
// declares: router, expert_load (excludes zipf, which each command declares with its own default),
// capacity_factor, max_nodes_per_token, node_chips, placement, replicate_hot, replicas, dispatch_dtype,
// combine_dtype, batches, seed.
template <class Config>
OptionTable<Config> expert_routing_options(const std::string& batches_meaning, int max_batches) {
  OptionTable<Config> t;
  t.push_back(text_option("router", &Config::router, {"uniform", "random"},
                          "uniform: each expert gets its expected share; random: drawn with --seed",
                          "assumption"));
  Option<Config> load{"expert_load", "file (JSON array or CSV), or an array in a workload file",
                      "measured load per expert, in place of the Zipf popularity",
                      "none: the Zipf popularity"};
  load.set = [](Config& c, const nlohmann::json& v, const std::string& where) {
    std::tie(c.expert_load, c.expert_load_source) = option_expert_load(v, where);
  };
  load.value = [](const Config& c) {
    return c.expert_load_source.empty() ? nlohmann::json() : nlohmann::json(c.expert_load_source);
  };
  load.excludes = {"zipf"};
  load.why = "a measured load replaces the Zipf popularity";
  t.push_back(load);
  Option<Config> capacity{"capacity_factor", "number > 0, or unlimited",
                          "C: an expert takes at most C x its fair share of tokens, the rest dropped",
                          "assumption: unlimited (no token dropped)"};
  capacity.set = [](Config& c, const nlohmann::json& v, const std::string& where) {
    if (v == "unlimited")
      c.capacity_factor.reset();
    else if (const double x = v.is_number() || v.is_string() ? option_number(v, where, 0, 1e9) : -1; x > 0)
      c.capacity_factor = x;
    else
      throw InputError(where + " must be a number > 0, or unlimited, not " + v.dump());
  };
  capacity.value = [](const Config& c) {
    return c.capacity_factor ? nlohmann::json(*c.capacity_factor) : nlohmann::json();
  };
  capacity.unset = "unlimited";
  t.push_back(capacity);
  t.push_back(
      integer_option("max_nodes_per_token", &Config::max_nodes, 0, 65536,
                     "node-limited routing: a token's experts on at most M nodes (random router; 0: any)",
                     "off; DeepSeek-V3 routes a token to at most 4 nodes (its report)"));
  t.push_back(integer_option("node_chips", &Config::node_chips, 0, 65536,
                             "chips per node, for --max-nodes-per-token", "assumption"));
  t.push_back(text_option("placement", &Config::placement, {"contiguous", "round-robin", "balanced"},
                          "where experts live: contiguous blocks, round-robin, or balanced (greedy by load)",
                          "assumption"));
  t.push_back(integer_option("replicate_hot", &Config::replicate_hot, 0, 65536,
                             "the K most popular experts get --replicas replicas each", "assumption"));
  t.push_back(
      integer_option("replicas", &Config::replicas, 1, 65536, "replicas per hot expert", "assumption"));
  t.push_back(text_option("dispatch_dtype", &Config::dispatch_dtype, {},
                          "element of the tokens sent to the experts",
                          "DeepSeek-V3 report: dispatch in FP8"));
  t.push_back(text_option("combine_dtype", &Config::combine_dtype, {}, "element of the outputs sent back",
                          "DeepSeek-V3 report: combine in BF16"));
  t.push_back(integer_option("batches", &Config::batches, 1, max_batches, batches_meaning, "assumption"));
  Option<Config> seed{"seed", "integer >= 0",
                      "random seed of the router's draws (serve: of the request lengths too)", "assumption"};
  seed.set = [](Config& c, const nlohmann::json& v, const std::string& where) {
    c.seed = option_seed(v, where);
  };
  seed.value = [](const Config& c) { return nlohmann::json(c.seed); };
  t.push_back(seed);
  return t;
}

}  // namespace ultrasim
