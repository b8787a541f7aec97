// A mixture-of-experts (MoE) layer with expert parallelism: the router's choice of experts for every
// token, the capacity limit that drops token copies, the dispatch and combine traffic between chips, each
// chip's expert compute as a roofline, and the energy and cost of the layer. Free of SimGrid: the
// simulation of dispatch -> experts -> combine is the MoeLayer program (moe_layer.hpp) run by sim/.
//
// Placement (`placement`): expert e lives on chip owner(e) (optional replicas of the hottest:
// place_replicas).
//   contiguous   blocks, chip c holding experts [first(c), first(c+1)) with the first E mod p chips holding
//                one more (even_chunks). E < p leaves the last chips without experts.
//   round-robin  expert e on chip e mod p.
//   balanced     the chips keep contiguous's expert counts; the experts, heaviest first, each go to the chip
//                with the lowest expected load that still has room (ties to the lower rank), and unless
//                --replicate-hot says otherwise the p - E mod p heaviest get one replica each (E mod p != 0),
//                filling every chip to ceil(E / p): greedy balancing with redundant hot experts.
// Popularity: expert e's weight is w_e ∝ 1 / (e + 1)^s (Zipf, s = 0 uniform): the hottest experts are the
// lowest numbered, on chip 0 (the worst case of contiguous placement); a measured load vector
// (--expert-load FILE) gives any other weights.
// Routing (`router`):
//   uniform  the expected split, deterministic: chip s gives expert e a_se = N k w_e token copies
//            (capped at N: a token picks an expert at most once, the excess spread over the others in
//            proportion), rounded to integers by largest remainder with ties rotated by chip so the
//            experts' totals stay balanced.
//   random   every token draws k distinct experts by weight (without replacement), from a generator
//            seeded with (seed, chip, token): the same seed gives the same routing.
// Node-limited routing (random router, max_nodes M > 0, as DeepSeek-V3 sends a token to at most 4 nodes):
//            a token draws M distinct nodes of node_chips chips by the summed weight of the experts they
//            home, then its k experts among those nodes' experts by weight.
// Capacity factor C: expert e accepts at most ceil(C N p k / E) token copies; the rest are dropped
// (uniform: taken from each sender in proportion, largest remainder; random: in arrival order, token
// index first, then chip, so drops fall on every chip alike).
// De-duplication (on by default): a token goes to a chip once however many of its experts sit there,
// and comes back once (the chip sums its experts' outputs). random: exact per token; uniform: the expected
// count N (1 - prod_{j<k} (1 - q / (1 - j/E))) with q the chip's share of the sender's copies, rounded
// (exact for k = 1 and for equal weights without drops, where it is the hypergeometric C(E-m,k)/C(E,k)
// for a chip of m experts; an approximation otherwise).
// Expert compute on chip c (a gated FFN: three H x F matrices, 2 FLOPs per multiply-add):
//   flops = 6 H F x (token copies on c's experts)
//   bytes = 3 H F x weight_bytes x (c's experts with any token) + H x (dispatch + combine element bytes)
//           x (token copies on c's experts)
//   time  = the chip model's (chip_model.hpp): a grouped GEMM of M = the chip's copies / its experts with
//           any token, at the weight dtype's peak, 3 kernels; with the default chip parameters
//           max(flops / (chip_flops x compute_efficiency), bytes / hbm_bandwidth)
// With m micro-chunks each chunk computes 1/m of the copies and reads the weights again.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/traffic_matrix.hpp"
#include "sim/machine/chip_model.hpp"
#include "topology/base/params.hpp"

namespace ultrasim {

struct MoeConfig {
  std::string topology = "trn3";
  int experts = 0;                         // E, >= 1
  int top_k = 1;                           // k, 1..E
  std::uint64_t tokens_per_chip = 0;       // N, >= 1: the batch's tokens on each chip
  std::vector<std::uint64_t> chip_tokens;  // tokens on each chip, if they differ (empty: N on each)
  std::string placement = "contiguous";    // contiguous | round-robin | balanced
  std::uint64_t hidden = 0;                // H, the model dimension
  std::uint64_t ffn = 0;                   // F, an expert's intermediate dimension (0: same as H)
  std::string router = "uniform";          // uniform | random
  double zipf = 0;                         // s >= 0
  std::vector<double> expert_load;         // measured weights, one per expert (empty: Zipf)
  std::string expert_load_source;          // the file they came from (for the result)
  std::optional<double> capacity_factor;   // nullopt: unlimited
  bool dedup = true;                       // one copy of a token per chip
  std::string dispatch_dtype = "float8";   // element of the tokens sent to the experts
  std::string combine_dtype = "bfloat16";  // element of the outputs sent back
  std::string weight_dtype = "float8";     // element of the expert weights read from HBM
  int micro_chunks = 1;                    // dispatch/compute/combine pipelined in this many chunks
  int batches = 1;                         // routings drawn afresh (random) for the latency tail
  int replicate_hot = 0;                   // the K most popular experts get `replicas` replicas each
  int replicas = 1;
  std::uint64_t seed = 0;
  int max_nodes = 0;   // node-limited routing: a token's experts on at most this many nodes (0: any)
  int node_chips = 0;  // chips per node (max_nodes > 0)
  std::vector<std::pair<std::string, std::string>> overrides;  // --set: topology, model and chip_params()
  // Checks ranges and names; throws InputError naming the option and what it expects.
  void validate() const;
  // The tokens chip `chip` routes: chip_tokens[chip], or N.
  std::uint64_t tokens_of(int chip) const {
    return chip_tokens.empty() ? tokens_per_chip : chip_tokens.at(chip);
  }
  // The replicated experts in effect: replicate_hot, or balanced's default (see above).
  int hot_replicated(int p) const;
};

// Node-limited routing's options (max_nodes 0: off): InputError naming --max-nodes-per-token.
void check_node_limit(int max_nodes, int node_chips, const std::string& router);

struct MoeRouting {
  int p = 0, experts = 0;
  std::vector<int> owner;  // expert -> its home chip
  // Instances: every expert at its home (instance e = expert e), then the replicas of hot experts.
  std::vector<int> instance_chip, instance_expert;
  std::vector<std::vector<std::uint64_t>> instance_copies;  // [chip][instance]: token copies it serves
  std::vector<std::uint64_t> instance_load;                 // per instance: copies (all senders)
  std::vector<std::vector<std::uint64_t>> copies;           // [chip][expert]: token copies kept
  std::vector<std::uint64_t> expert_load;                   // per expert: copies kept (all senders)
  std::vector<std::vector<std::uint64_t>> dispatch_tokens;  // [src][dst]: tokens sent (own on diagonal)
  std::uint64_t routed = 0;                                 // token copies before the capacity limit
  std::uint64_t dropped = 0;                                // token copies the capacity limit dropped
  std::optional<std::uint64_t> capacity;                    // per expert, token copies
  std::uint64_t copies_on(int chip) const;                  // the chip's experts' copies
};

// The expert -> chip placement `placement` (see above) by weight `w` (balanced only).
std::vector<int> place_experts(int experts, int p, const std::string& placement = "contiguous",
                               const std::vector<double>& w = {});
// Replicas (`replicate_hot` K, `replicas` R): the K heaviest experts (by weight `w`, ties to the lower
// number), in that order, each get R replicas, one at a time on the chip whose expected share of the
// copies is the lowest then (ties to the lower rank; never a chip that already holds the expert), and
// their copies split evenly over the homes (uniform: each sender's share, largest remainder; random: by
// token, in turn). Capacity stays per expert.
void place_replicas(MoeRouting& routing, const std::vector<double>& w, int hot, int replicas);
// The experts of `config` placed on `p` chips and replicated (owner, instance_chip, instance_expert; p and
// experts set), nothing routed yet.
MoeRouting place_instances(const MoeConfig& config, int p);
// The popularity weights (normalised to sum 1).
std::vector<double> expert_weights(const MoeConfig& config);
// Routes one batch; `batch` varies the random router's seed (batch b draws with seed + b).
MoeRouting route_tokens(const MoeConfig& config, int p, int batch);

// Bytes per element of the dispatch, combine and weight dtypes.
struct MoeSizes {
  std::uint64_t dispatch = 1, combine = 2;
  double weight = 1;  // dtype_bytes: 4-bit weights carry their block scales
};
MoeSizes moe_sizes(const MoeConfig& config);
// dispatch_tokens x H x dispatch bytes (src -> dst), and the combine matrix: the transpose in combine bytes.
TrafficMatrix dispatch_matrix(const MoeRouting& routing, std::uint64_t hidden, std::uint64_t element_bytes);
TrafficMatrix combine_matrix(const MoeRouting& routing, std::uint64_t hidden, std::uint64_t element_bytes);

// The roofline of one chip's expert compute (one micro-chunk of `chunks`).
struct ExpertCompute {
  double flops = 0, bytes = 0;  // per chunk
  double seconds = 0;           // per chunk: max(flops / (peak x efficiency), bytes / HBM bandwidth)
  bool memory_bound = false;
  unsigned tabled = 0, fell_back = 0;  // kernel classes priced from the chip's tables / by its roofline
};
ExpertCompute expert_compute(const MoeRouting& routing, int chip, const MoeConfig& config,
                             const ParamSet& params, int chunks);

// A workload file's MoE fields into a config; throws InputError naming the field and what it expects.
MoeConfig moe_config_from_json(const nlohmann::json& workload, const std::string& file);
// Reads a measured expert-load vector: a JSON array of numbers, or numbers separated by commas,
// spaces or line breaks (CSV); one non-negative number per expert, not all zero.
std::vector<double> read_expert_load(const std::string& path);
// InputError naming `name` unless every load is finite and >= 0 and their sum is finite and > 0
// (1e308 twice adds up to infinity, and every share of it to 0).
void check_expert_load(const std::vector<double>& loads, const std::string& name);

}  // namespace ultrasim
