// Serving a model on the fabric (`ultrasim serve`, "workload": "serving"): a batch of requests on a
// deployment, its prefill (TTFT) and its decode steps (TPOT), layer by layer. Free of SimGrid: this file
// turns the model, the deployment and the requests into a step's plan, a list of segments in the order a
// step runs them (or, for request arrivals, an iteration's mix of prefill chunks and decode tokens:
// plan_iteration); segment_pricer.hpp prices each segment on the fabric and step_accounting.hpp adds them up.
//
// Deployment (chips C = the topology's): pp pipeline stages of C / pp chips (stage s: ranks
// [s C / pp, (s + 1) C / pp)); within a stage the attention runs tp-way tensor parallel in dp = C / (tp pp)
// data-parallel groups (group d: ranks d tp .. d tp + tp - 1), and the experts are spread over every chip
// of the stage (ep = C / pp) as `placement` puts them (workloads/moe/moe.hpp). Request i of a batch goes to
// data-parallel group i mod dp; a group's tokens are split evenly over its tp chips at the MoE layer (each
// dispatches its share), and gathered back by the next tensor-parallel all-reduce.
//
// A step (prefill: every request's input at once; decode: one token per request at its context), per
// layer of each stage, in order:
//   attention   compute: per chip max(FLOPs / (chip_flops x compute_efficiency), bytes / hbm_bandwidth):
//               2 x attention weights / tp x tokens + score FLOPs / tp; bytes: weights / tp + the KV cache
//               read (decode: every request's context; prefill: written) / kv split + activations in/out
//   tp          an all-reduce of the group's tokens x H x activation bytes over each tp group (tp > 1)
//   ffn         dense: compute as above with 3 H F / tp weights, then the tp all-reduce again;
//               MoE: the shared experts (compute, every chip its own tokens), then the MoE layer as
//               `ultrasim moe` runs it (dispatch, experts, combine) on the stage's chips
//   then        the stage's activations to the next stage (a send from each chip to the same rank there)
//   last stage  the LM head: 2 V H / tp FLOPs per token that needs logits (decode: each; prefill: the last
//               of each request), V H / tp weight bytes
// The KV split: MHA / GQA min(tp, kv_heads) ways; MLA none (every tp rank keeps the whole latent).
// Contexts: a prefill token at position j attends j + 1 tokens; a decode step is taken at each request's
// mid-decode context, input + output / 2 (the KV read grows linearly, so this is the decode's mean step).
// Micro-batch overlap (micro_batches 2): each group's requests split in two halves that alternate, one
// computing while the other communicates: a layer costs max(compute of both, communication of both),
// each half's communication simulated alone (they never overlap each other).
//
// Later work, for which the interface leaves room (the README says how): expert data parallelism
// (ep < C / pp), pipeline stages and micro-batch overlap under request arrivals.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/machine/chip_model.hpp"
#include "topology/base/options.hpp"
#include "topology/base/params.hpp"
#include "workloads/moe/moe.hpp"
#include "workloads/serving/model.hpp"

namespace ultrasim {

struct ServingConfig {
  std::string topology = "trn3";
  ModelShape model;
  int tp = 1, pp = 1;     // attention tensor parallelism, pipeline stages
  int micro_batches = 1;  // 1, or 2 (overlap)
  std::string placement = "contiguous";
  int replicate_hot = 0, replicas = 1;
  std::vector<std::uint64_t> batch_sizes{1};  // requests per step; several make a frontier
  std::uint64_t input_len = 1024, output_len = 256;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> lengths;  // (input, output) drawn from (empty: fixed)
  // Without `lengths`: each request's lengths drawn around input_len/output_len (fixed | uniform:R |
  // lognormal:SIGMA, requests.hpp's generator), per batch with `seed`.
  std::string length_dist = "fixed";
  std::string lengths_source;
  std::string phase = "both";  // prefill | decode | both
  std::string router = "random";
  std::optional<double> zipf;  // nullopt: the model's expert_zipf
  std::vector<double> expert_load;
  std::string expert_load_source;
  std::optional<double> capacity_factor;
  std::string dispatch_dtype = "float8", combine_dtype = "bfloat16";
  std::string weight_dtype, kv_dtype;  // the deployment's, over the model's (empty: the model's)
  int max_nodes = 0, node_chips = 0;   // node-limited routing (workloads/moe/moe.hpp); 0: any node
  // Multi-token prediction / speculative decoding: each decode step verifies draft_tokens drafted tokens
  // per request (1 + K tokens through the model), the draft runs K passes of draft_layers layers shaped
  // like the model's last one (DeepSeek-V3's MTP module: 1) and the LM head, and a step yields
  // 1 + a + ... + a^K tokens per request on average (each draft accepted only after the ones before it).
  int draft_tokens = 0, draft_layers = 1;
  double acceptance = 0.85;  // DeepSeek-V3 report 5.4.3: 85-90 % for the second token
  double tokens_per_step() const;
  int batches = 1;  // routed batches (and request draws) per point: the p50 / p99
  std::uint64_t seed = 0;
  std::string allreduce = "auto";    // the tp all-reduce's algorithm
  std::vector<double> tpot_targets;  // s: "highest tokens/s per chip with p99 TPOT <= X"
  std::string chip = "auto";         // the chip profile (serving_chips())
  std::string engine = "auto";
  int check_engine = 0;  // --check-engine N: the first N layers' exchanges on the fast and the flow engine
  std::vector<std::pair<std::string, std::string>> overrides;  // --set
  // Checks what needs no topology; throws InputError naming the option.
  void validate() const;
};

// The chip profiles (workloads/serving/chips.cpp): per chip the chip model's values (chip_model.hpp:
// peaks, efficiencies per operation class, fixed costs, the share communication takes) and its
// hbm_capacity, power and price, each with its source ("fitted: ..." where a fit chose it, "assumption"
// where nothing is published); `auto` picks by the topology (the scale-up preset inside `cluster:K:PRESET`).
struct ChipValue {
  std::string name, value, source;
};
struct ChipProfile {
  std::string name, description;
  std::vector<std::string> topologies;  // preset names (and name prefixes) it is the default for
  std::vector<ChipValue> values;
  std::string file;  // a profile read from a file: its path
  // A profile file's own kernel tables ("tables": rows, kernel_tables "inline"), registered as the key
  // its kernel_tables value holds.
  std::vector<KernelRow> tables;
};
const std::vector<ChipProfile>& serving_chips();
// A built-in by name, the topology's with "auto", or a profile file (a name ending in .json); InputError
// naming the file and field for a profile file with a field missing, unknown or out of range.
ChipProfile chip_profile(const std::string& name, const std::string& topology);
// A profile file: {"name", "description", "values": {NAME: value or "value with unit"}, "sources": {NAME:
// text}, "tables": [kernel table rows]}, every parameter of serving_params() given but those a profile may
// leave out (kernel_tables, gemm_floor, attention_floor: their defaults). "tables" (the fields of
// sim/machine/kernel_tables.hpp's rows) goes with kernel_tables "inline".
ChipProfile read_chip_profile(const std::string& path);
// The profile as the file read_chip_profile reads.
nlohmann::ordered_json chip_profile_json(const ChipProfile& profile);
// A serving chip: its hbm_capacity and what chip_params() declares.
struct ServingChipParams {
  double hbm_capacity = 0;  // bytes
  ChipParams chip;
};
const ParamTable<ServingChipParams>& serving_chip_table();
// serving_chip_table().specs().
std::vector<ParamSpec> serving_params();

// The deployment on C chips.
struct ServingLayout {
  int chips = 0, tp = 1, pp = 1, dp = 1, ep = 1;
  int stage_chips() const { return chips / pp; }
};
// Throws InputError when tp x pp does not divide the chips, or the model's layers the stages.
ServingLayout serving_layout(const ServingConfig& config, int chips);

// The requests of batch `batch` at batch size `size`: (input, output) tokens each.
std::vector<std::pair<std::uint64_t, std::uint64_t>> draw_requests(const ServingConfig& config,
                                                                   std::uint64_t size, int batch);

struct Segment {
  enum Kind { kCompute, kAllreduce, kMoe, kSend } kind = kCompute;
  int stage = 0, layer = -1, micro_batch = 0;  // layer -1: the stage's send or the LM head
  int repeat = 1;    // a compact plan: the segment stands for this many identical layers' (or passes')
  std::string what;  // attention, ffn, shared experts, lm head, tp, moe, pp
  std::vector<ChipWork> chips;            // compute: every chip of the stage (stage ranks)
  std::uint64_t bytes = 0;                // allreduce: per group (the busiest); send: per chip
  std::vector<std::uint64_t> chip_bytes;  // send: what each chip of the stage sends on
  MoeConfig moe;                          // moe: the layer as `ultrasim moe` would run it
};

// One step of one phase: its segments, and what the batch holds.
struct StepPlan {
  bool decode = true;
  std::uint64_t requests = 0, tokens = 0;  // tokens computed (prefill: inputs; decode: one per request)
  std::uint64_t host_requests = 0;         // the most requests one data-parallel group's host handles
  // The attention's balance over the data-parallel groups: the mean over the most of a group's attention
  // work (the contexts its tokens attend); 1 when every group's is the same (or there is none).
  double attention_balance = 1;
  std::vector<Segment> segments;
};

// One request's part of an iteration (request arrivals, workloads/serving/schedulers/): `tokens` of it
// through the model at positions context .. context + tokens - 1 of its sequence, on data-parallel group
// `group`. Decode: the tokens each attend the cache of `context` tokens and those before them, and each
// needs logits (1, or 1 + the drafted tokens it verifies). Prefill (a whole prompt, or a chunk of it):
// the chunk attends the `context` tokens before it and itself causally, writes its KV, and needs logits
// only for its last token when it ends the prompt (`last`).
struct StepItem {
  int group = 0;
  std::uint64_t context = 0, tokens = 1;
  bool decode = true, last = true;
};

// The MoE layer `layer` of batch `batch` as `ultrasim moe` would run it: the model's experts, the run's
// router, placement and dtypes, `chip_tokens` on each chip (stage ranks), seed config.seed + layer x 2^20 +
// batch.
MoeConfig moe_layer_config(const ServingConfig& config, const std::vector<std::uint64_t>& chip_tokens,
                           int layer, int batch);

// The plan of batch `batch` (its requests `requests`) in `decode` or prefill, on `layout`, the MoE layer
// l routing with seed config.seed + l x 2^20 and batch `batch` (as `ultrasim moe --seed` does).
StepPlan plan_step(const ServingConfig& config, const ServingLayout& layout,
                   const std::vector<std::pair<std::uint64_t, std::uint64_t>>& requests, bool decode,
                   int batch, int micro_batch_of = -1);

// The plan of an iteration that mixes prefill chunks and decode tokens (`items`), the MoE layers routing
// as in batch `batch`. `compact`: the layers of a stage that are the same (every dense layer, every MoE
// layer but its routing; the draft's passes) planned once with their count in `repeat`, the MoE layer
// being the first of the stage (a step-time model prices the rest from it).
StepPlan plan_iteration(const ServingConfig& config, const ServingLayout& layout,
                        const std::vector<StepItem>& items, int batch, bool compact);

// The HBM a chip needs: weights (the heaviest chip) and the KV cache of its requests at their longest.
struct MemoryUse {
  double weights = 0, kv = 0, capacity = 0;
  int chip = 0;  // the chip that needs the most
};
MemoryUse memory_use(const ServingConfig& config, const ServingLayout& layout, const ParamSet& params,
                     std::uint64_t batch_size);
// Throws InputError "the model does not fit ..." or "the KV cache of batch B does not fit ..." saying by
// how much.
void check_memory(const MemoryUse& use, std::uint64_t batch_size);

// serve's options, declared once (workloads/serving/serving_options.cpp): flags, workload-file fields,
// `ultrasim list` and the reference.
const OptionTable<ServingConfig>& serving_options();
// A serving workload file's fields into a config; InputError naming the field.
ServingConfig serving_config_from_json(const nlohmann::json& workload, const std::string& file);
// "1:1024:x2" (geometric), "8:64:+8" (arithmetic), "1,8,64" or "32" (parse_series): at most 64 sizes.
std::vector<std::uint64_t> parse_batch_sizes(const std::string& text);
// A length file: lines or a JSON array of [input, output] pairs ("input,output" per CSV line).
std::vector<std::pair<std::uint64_t, std::uint64_t>> read_lengths(const std::string& path);

}  // namespace ultrasim
