#include "workloads/moe/moe_options.hpp"

namespace ultrasim {

std::pair<std::vector<double>, std::string> option_expert_load(const nlohmann::json& v,
                                                               const std::string& where) {
  if (v.is_string()) return {read_expert_load(v.get<std::string>()), v.get<std::string>()};
  if (!v.is_array()) throw InputError(where + " must be a file name or an array of numbers >= 0");
  std::vector<double> loads;
  for (const auto& x : v) {
    if (!x.is_number() || x.get<double>() < 0) throw InputError(where + " must hold numbers >= 0");
    loads.push_back(x.get<double>());
  }
  check_expert_load(loads, where);
  return {loads, where};
}

const OptionTable<MoeConfig>& moe_options() {
  static const OptionTable<MoeConfig> table = [] {
    using C = MoeConfig;
    OptionTable<C> t;
    t.push_back(
        text_option("topology", &C::topology, {}, "topology spec (ultrasim list topologies)", "assumption"));
    auto shape = [&](Option<C> o) {
      o.required = true;
      t.push_back(std::move(o));
    };
    shape(integer_option("experts", &C::experts, 1, 1 << 20, "routed experts E", "the model"));
    shape(integer_option("top_k", &C::top_k, 1, 1 << 20, "experts per token k", "the model"));
    shape(integer_option("tokens_per_chip", &C::tokens_per_chip, 1, 1 << 30,
                         "tokens in the batch on each chip N", "the batch"));
    shape(integer_option("hidden", &C::hidden, 1, 1 << 24, "model dimension H", "the model"));
    t.push_back(integer_option("ffn", &C::ffn, 0, 1 << 24, "an expert's intermediate dimension F (0: H)",
                               "the model"));
    for (auto& o :
         expert_routing_options<C>("batches, routing drawn afresh each (random): p50/p99/max", 100000))
      t.push_back(std::move(o));
    t.push_back(
        number_option("zipf", &C::zipf, 0, 100, "expert popularity exponent s (0: uniform)", "assumption"));
    t.push_back(bool_option("dedup", &C::dedup, "send a token once per chip, not once per expert",
                            "DeepSeek-V3 report: a token crosses to a node once, then fans out inside it"));
    t.push_back(text_option("weight_dtype", &C::weight_dtype, {},
                            "element of the expert weights read from HBM",
                            "DeepSeek-V3 report: FP8 weights"));
    t.push_back(integer_option("micro_chunks", &C::micro_chunks, 1, 1024,
                               "pipeline dispatch, experts and combine in this many chunks", "assumption"));
    return t;
  }();
  return table;
}

}  // namespace ultrasim
