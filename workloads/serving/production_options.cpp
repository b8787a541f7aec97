// The options of request arrivals and their pools (`ultrasim serve --rate/--requests`, a serving workload
// file with "rate" or "requests"), declared once (topology/base/options.hpp); `ultrasim plan` takes the
// arrival ones (kArrivalOptions) from the same table.
#include "workloads/serving/production_run.hpp"

#include <algorithm>

namespace ultrasim {
namespace {

using P = ProductionConfig;

// Where the requests come from: a trace, or generated arrivals.
void add_arrival_options(OptionTable<P>& t) {
  Option<P> trace = text_field<P>("requests", &P::requests_file, {},
                                  "request arrivals from a trace: CSV or JSON Lines of arrival, prompt and "
                                  "output tokens",
                                  "none: --rate");
  trace.excludes = {"rate"};
  trace.why = "a trace, or generated arrivals";
  t.push_back(trace);
  Option<P> rate = number_field<P>(
      "rate", [](auto& p) -> auto& { return p.generator.rate; }, 1e-9, 1e9,
      "request arrivals generated at this many requests/s (with --seed)", "none: --requests");
  rate.value = [](const P& p) {
    return p.generator.rate > 0 ? nlohmann::json(p.generator.rate) : nlohmann::json();
  };
  t.push_back(rate);
  t.push_back(integer_field<P>(
      "num_requests", [](auto& p) -> auto& { return p.generator.count; }, 1, 1 << 24,
      "requests --rate generates", "assumption"));
  t.push_back(number_field<P>(
      "burstiness", [](auto& p) -> auto& { return p.generator.burstiness; }, 1e-9, 1000,
      "gamma shape of the gaps between arrivals: 1 Poisson, < 1 burstier",
      "Poisson arrivals (Vidur, vLLM bench)"));
  Option<P> shape = text_field<P>(
      "trace_shape", [](auto& p) -> auto& { return p.generator.shape; }, {},
      "generated lengths and burstiness of a public trace: conversation | code | long-context | reasoning | "
      "agentic (ultrasim list shapes)",
      "none: --input-len, --output-len, --length-dist, --burstiness");
  shape.excludes = {"requests", "length_dist", "burstiness"};
  shape.why = "the shape draws the lengths and the gaps between arrivals";
  t.push_back(shape);
  t.push_back(text_field<P>(
      "length_dist", [](auto& p) -> auto& { return p.generator.length_dist; }, {},
      "generated lengths around --input-len/--output-len: fixed | uniform:R | lognormal:SIGMA",
      "assumption"));
  t.push_back(integer_field<P>(
      "max_batch", [](auto& p) -> auto& { return p.options.max_batch; }, 1, 1 << 24,
      "requests a data-parallel group runs at once", "vLLM's max_num_seqs 256"));
  t.push_back(integer_field<P>(
      "token_budget", [](auto& p) -> auto& { return p.options.token_budget; }, 1, 1 << 24,
      "tokens of a data-parallel group in one iteration", "vLLM's max_num_batched_tokens 8192"));
  t.push_back(
      time_field<P>("slo_ttft", &P::slo_ttft, "goodput: a request's TTFT within this (0: none)", "none"));
  t.push_back(
      time_field<P>("slo_tpot", &P::slo_tpot, "goodput: a request's TPOT within this (0: none)", "none"));
}

// The capacity search (workloads/serving/capacity.hpp): the highest rate that meets the SLOs.
void add_capacity_options(OptionTable<P>& t) {
  Option<P> capacity = bool_option<P>(
      "capacity", &P::capacity,
      "search the highest request rate sustained within the SLOs (instead of --rate, --num-requests)",
      "DistServe's goodput");
  capacity.excludes = {"rate", "num_requests"};
  capacity.why = "the search sets the rate and the requests";
  t.push_back(capacity);
  t.push_back(number_field<P>(
      "attainment", [](auto& p) -> auto& { return p.search.attainment; }, 1e-9, 1,
      "capacity: the share of requests within the SLOs", "DistServe's 90 %"));
  t.push_back(text_field<P>(
      "attainment_of", [](auto& p) -> auto& { return p.search.attainment_of; }, {"both", "each"},
      "capacity: both (requests within both SLOs) | each (each SLO at that percentile: p99 at 0.99)",
      "DistServe: both"));
  t.push_back(number_field<P>(
      "capacity_precision", [](auto& p) -> auto& { return p.search.precision; }, 1e-9, 1,
      "capacity: the search stops when the highest meeting and lowest failing rate are this close",
      "assumption"));
  t.push_back(integer_field<P>(
      "window_requests", [](auto& p) -> auto& { return p.search.window; }, 0, 1 << 22,
      "capacity: requests measured per trial rate (0: 2000; the warm-up and the tail come beside)",
      "assumption"));
}

// How the pools serve them: the scheduler, the KV cache, disaggregation, the step-time model.
void add_pool_options(OptionTable<P>& t) {
  t.push_back(text_option<P>("scheduler", &P::scheduler, {},
                             "static | continuous | chunked | disaggregated (ultrasim list schedulers)",
                             "vLLM's continuous batching"));
  t.push_back(integer_option<P>("kv_blocks", &P::kv_blocks, 0, 1ll << 40,
                                "KV blocks of 16 tokens per data-parallel group (0: what HBM holds)",
                                "vLLM's block size 16"));
  t.push_back(number_option<P>("kv_fraction", &P::kv_fraction, 1e-9, 1,
                               "of HBM the weights and KV cache may use",
                               "vLLM's gpu_memory_utilization 0.9"));
  t.push_back(integer_option<P>("prefill_chips", &P::prefill_chips, 0, 65536,
                                "disaggregated: the first N chips prefill", "none: --prefill-share"));
  t.push_back(number_option<P>("prefill_share", &P::prefill_share, 0, 0.999999,
                               "disaggregated: the first share of the chips prefill (0.25: a quarter)",
                               "none: --prefill-chips"));
  t.push_back(integer_option<P>("prefill_tp", &P::prefill_tp, 0, 4096,
                                "disaggregated: the prefill pool's tp (0: --tp)", "--tp"));
  t.push_back(bool_option<P>("exact_steps", &P::exact_steps,
                             "simulate every iteration's layers (default: the step-time model)",
                             "assumption"));
  t.push_back(integer_option<P>("grid_layers", &P::grid_layers, 1, 1024,
                                "the step-time model: MoE layers simulated per grid point", "assumption"));
  t.push_back(text_option<P>("grid_cache", &P::grid_cache, {},
                             "the step-time model: a directory where runs share their simulated points",
                             "none"));
}

// The options only static batches read, each with what to use instead under arrivals.
struct StaticOnlyOption {
  std::string name, instead;
};
const std::vector<StaticOnlyOption>& static_only_serving_options() {
  static const std::vector<StaticOnlyOption> options{
      {"batch", "with arrivals, --max-batch"},
      {"phase", "arrivals run both phases, as their scheduler orders them"},
      {"batches", "arrivals draw each request once; give more with --num-requests"},
      {"tpot_target", "arrivals judge TPOT against --slo-tpot"},
      {"check_engine", "check the engine on static batches of the same deployment"},
  };
  return options;
}

}  // namespace

const std::vector<std::string> kArrivalOptions{"requests",    "rate",        "num_requests", "burstiness",
                                               "trace_shape", "length_dist", "max_batch",    "token_budget",
                                               "slo_ttft",    "slo_tpot"};

const OptionTable<ProductionConfig>& production_options() {
  static const OptionTable<P> table = [] {
    OptionTable<P> t;
    add_arrival_options(t);
    add_capacity_options(t);
    add_pool_options(t);
    return t;
  }();
  return table;
}

std::string static_only_refusal(const std::vector<std::string>& given, bool from_trace, bool flags) {
  auto flag = [flags](const std::string& name) { return flags ? flag_of(name) : "field \"" + name + "\""; };
  for (const StaticOnlyOption& o : static_only_serving_options())
    if (std::find(given.begin(), given.end(), o.name) != given.end())
      return flag(o.name) + " is for static batches (without --rate or --requests): " + o.instead;
  if (from_trace)
    for (const char* name : {"input_len", "output_len", "lengths"})
      if (std::find(given.begin(), given.end(), name) != given.end())
        return flag(name) +
               " is for generated requests: the request trace (--requests) gives each request's lengths";
  return "";
}

}  // namespace ultrasim
