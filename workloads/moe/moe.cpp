#include "workloads/moe/moe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "collectives/collective.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/mix.hpp"
#include "topology/base/units.hpp"
#include "topology/routing.hpp"
#include "workloads/collective/collective_job.hpp"
#include "workloads/moe/moe_options.hpp"
#include "workloads/workload_file.hpp"

namespace ultrasim {
namespace {

// The next output of a splitmix64 generator at `state` (advanced by the golden-ratio step).
std::uint64_t next_random(std::uint64_t& state) {
  const std::uint64_t out = splitmix64(state);
  state += kSplitmixStep;
  return out;
}

// A uniform double in [0, 1) from 53 random bits (the same on every platform).
double uniform01(std::uint64_t& state) {
  return static_cast<double>(next_random(state) >> 11) * 0x1p-53;
}

// `total` cut in proportion to `weights` as split_bytes cuts it (largest remainders), except that equal
// remainders go to the lowest (index + rotate) mod n rather than the lowest index: senders rotating
// their ties keep the experts' totals balanced. All zero: nothing to cut.
std::vector<std::uint64_t> apportion(std::uint64_t total, const std::vector<double>& weights, int rotate) {
  const int n = static_cast<int>(weights.size());
  std::vector<std::uint64_t> out(n, 0);
  if (n == 0 || total == 0) return out;
  const int first = (n - rotate % n) % n;  // the index whose (index + rotate) mod n is 0
  std::vector<double> rotated(n);
  for (int i = 0; i < n; ++i) rotated[i] = weights[(first + i) % n];
  const auto parts = split_bytes(total, rotated);
  for (int i = 0; i < n; ++i) out[(first + i) % n] = parts[i];
  return out;
}

// Water-filling: N k w_e capped at N, the excess spread over the uncapped in proportion to their weight.
std::vector<double> capped_shares(const std::vector<double>& w, double n, int k) {
  std::vector<double> share(w.size());
  std::vector<bool> capped(w.size(), false);
  double left = n * k;
  for (bool changed = true; changed;) {
    changed = false;
    double free_weight = 0;
    for (std::size_t e = 0; e < w.size(); ++e)
      if (!capped[e]) free_weight += w[e];
    for (std::size_t e = 0; e < w.size(); ++e) {
      if (capped[e]) continue;
      share[e] = free_weight > 0 ? left * w[e] / free_weight : 0;
      if (share[e] > n) {
        share[e] = n, capped[e] = true, changed = true;
        left -= n;
        break;
      }
    }
  }
  return share;
}

}  // namespace

void MoeConfig::validate() const {
  if (experts < 1 || experts > (1 << 20)) throw InputError("--experts must be between 1 and 1048576");
  if (top_k < 1 || top_k > experts)
    throw InputError("--top-k " + std::to_string(top_k) + " must be between 1 and the experts (" +
                     std::to_string(experts) + ")");
  if (replicas < 1) throw InputError("--replicas must be at least 1");
  if (chip_tokens.empty() && (tokens_per_chip < 1 || tokens_per_chip > (1u << 30)))
    throw InputError("--tokens-per-chip must be between 1 and 1073741824");
  for (const auto n : chip_tokens)
    if (n > (1u << 30))
      throw InputError("tokens on a chip must be at most 1073741824, not " + std::to_string(n));
  if (placement != "contiguous" && placement != "round-robin" && placement != "balanced")
    throw InputError("--placement '" + placement + "': expected contiguous, round-robin or balanced");
  if (hidden < 1 || hidden > (1u << 24)) throw InputError("--hidden must be between 1 and 16777216");
  if (ffn > (1u << 24)) throw InputError("--ffn must be at most 16777216");
  if (router != "uniform" && router != "random")
    throw InputError("--router '" + router + "': expected uniform or random");
  if (!(zipf >= 0) || !std::isfinite(zipf)) throw InputError("--zipf must be a number >= 0");
  if (!expert_load.empty() && static_cast<int>(expert_load.size()) != experts)
    throw InputError("expert load '" + expert_load_source + "' has " + std::to_string(expert_load.size()) +
                     " values; expected one per expert (" + std::to_string(experts) + ")");
  if (capacity_factor && !(*capacity_factor > 0))
    throw InputError("--capacity-factor must be > 0 (or 'unlimited')");
  if (micro_chunks < 1 || micro_chunks > 1024) throw InputError("--micro-chunks must be between 1 and 1024");
  if (replicate_hot < 0 || replicate_hot > experts)
    throw InputError("--replicate-hot " + std::to_string(replicate_hot) +
                     " must be between 0 and the experts (" + std::to_string(experts) + ")");
  if (batches < 1 || batches > 100000) throw InputError("--batches must be between 1 and 100000");
  for (const std::string* dtype : {&dispatch_dtype, &combine_dtype}) dtype_size(*dtype);
  dtype_bytes(weight_dtype);
  check_node_limit(max_nodes, node_chips, router);
}

void check_node_limit(int max_nodes, int node_chips, const std::string& router) {
  if (max_nodes < 0 || max_nodes > 65536)
    throw InputError("--max-nodes-per-token must be between 0 and 65536");
  if (max_nodes > 0 && router != "random")
    throw InputError("--max-nodes-per-token draws each token's nodes: it needs --router random");
  if (max_nodes > 0 && (node_chips < 1 || node_chips > 65536))
    throw InputError("--max-nodes-per-token needs --node-chips, the chips of a node (1 to 65536)");
}

std::uint64_t MoeRouting::copies_on(int chip) const {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < instance_chip.size(); ++i)
    if (instance_chip[i] == chip) total += instance_load[i];
  return total;
}

std::vector<int> place_experts(int experts, int p, const std::string& placement,
                               const std::vector<double>& w) {
  std::vector<int> owner;
  const auto blocks = even_chunks(static_cast<std::uint64_t>(experts), p);
  if (placement == "round-robin") {
    for (int e = 0; e < experts; ++e) owner.push_back(e % p);
  } else if (placement == "balanced") {
    owner.assign(experts, 0);
    std::vector<int> order(experts);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return w[a] > w[b]; });
    std::vector<double> load(p, 0.0);
    std::vector<std::uint64_t> room(blocks.begin(), blocks.end());
    for (int e : order) {
      int best = -1;
      for (int c = 0; c < p; ++c)
        if (room[c] > 0 && (best < 0 || load[c] < load[best])) best = c;
      owner[e] = best, load[best] += w[e], --room[best];
    }
  } else {
    for (int c = 0; c < p; ++c) owner.insert(owner.end(), blocks[c], c);
  }
  return owner;
}

int MoeConfig::hot_replicated(int p) const {
  if (placement != "balanced" || replicate_hot > 0 || experts % p == 0) return replicate_hot;
  return std::min(experts, p - experts % p);
}

std::vector<double> expert_weights(const MoeConfig& config) {
  std::vector<double> w(config.experts);
  for (int e = 0; e < config.experts; ++e)
    w[e] = config.expert_load.empty() ? std::pow(e + 1.0, -config.zipf) : config.expert_load[e];
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& x : w) x /= total;
  return w;
}

void place_replicas(MoeRouting& r, const std::vector<double>& w, int hot, int replicas) {
  const int E = static_cast<int>(r.owner.size());
  r.instance_chip = r.owner;
  r.instance_expert.resize(E);
  std::iota(r.instance_expert.begin(), r.instance_expert.end(), 0);
  std::vector<double> load(r.p, 0.0);  // expected share of the copies per chip
  for (int e = 0; e < E; ++e) load[r.owner[e]] += w[e];
  std::vector<int> order(E);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return w[a] > w[b]; });
  for (int n = 0; n < std::min(hot, E); ++n) {
    const int e = order[n];
    std::vector<int> homes{r.owner[e]};
    for (int k = 0; k < replicas && static_cast<int>(homes.size()) < r.p; ++k) {
      int best = -1;
      for (int c = 0; c < r.p; ++c)
        if (std::find(homes.begin(), homes.end(), c) == homes.end() && (best < 0 || load[c] < load[best]))
          best = c;
      const double h = static_cast<double>(homes.size());
      for (int c : homes) load[c] -= w[e] / h - w[e] / (h + 1);  // each home's share: w/h -> w/(h+1)
      load[best] += w[e] / (h + 1);
      homes.push_back(best);
      r.instance_chip.push_back(best);
      r.instance_expert.push_back(e);
    }
  }
}

namespace {

// A routing of `p` chips with the experts placed and replicated (place_instances), every count still zero,
// and the token copies before the limit and the capacity per expert (none if no expert can reach it).
MoeRouting moe_empty_routing(const MoeConfig& config, int p) {
  const int E = config.experts;
  if (!config.chip_tokens.empty() && static_cast<int>(config.chip_tokens.size()) != p)
    throw InputError("the MoE layer has tokens for " + std::to_string(config.chip_tokens.size()) +
                     " chips; the topology has " + std::to_string(p));
  MoeRouting r = place_instances(config, p);
  const int I = static_cast<int>(r.instance_chip.size());
  r.copies.assign(p, std::vector<std::uint64_t>(E, 0));
  r.instance_copies.assign(p, std::vector<std::uint64_t>(I, 0));
  r.dispatch_tokens.assign(p, std::vector<std::uint64_t>(p, 0));
  r.expert_load.assign(E, 0);
  for (int c = 0; c < p; ++c) r.routed += config.tokens_of(c) * static_cast<std::uint64_t>(config.top_k);
  if (config.capacity_factor) {  // a capacity no expert can reach is no limit (and must not overflow)
    const double capacity = std::ceil(*config.capacity_factor * static_cast<double>(r.routed) / E - 1e-9);
    if (capacity < static_cast<double>(r.routed))
      r.capacity = static_cast<std::uint64_t>(std::max(capacity, 0.0));
  }
  return r;
}

// homes[e]: expert e's instances in `r`, its home first.
std::vector<std::vector<int>> moe_expert_homes(const MoeRouting& r) {
  std::vector<std::vector<int>> homes(r.experts);
  for (int i = 0; i < static_cast<int>(r.instance_chip.size()); ++i) homes[r.instance_expert[i]].push_back(i);
  return homes;
}

// The uniform router's copies: each sender's N k picks apportioned by the capped shares of weight `w`;
// an expert over capacity keeps capacity copies, in proportion to each sender's.
void moe_uniform_copies(const MoeConfig& config, const std::vector<double>& w, MoeRouting& r) {
  const int E = config.experts, k = config.top_k, p = r.p;
  std::uint64_t shared_n = config.tokens_of(0);
  std::vector<double> share = capped_shares(w, static_cast<double>(shared_n), k);
  for (int s = 0; s < p; ++s) {
    const std::uint64_t N = config.tokens_of(s);
    if (N != shared_n) shared_n = N, share = capped_shares(w, static_cast<double>(N), k);
    r.copies[s] = apportion(N * k, share, s);
  }
  for (int e = 0; e < E; ++e) {
    std::uint64_t load = 0;
    for (int s = 0; s < p; ++s) load += r.copies[s][e];
    if (r.capacity && load > *r.capacity) {
      std::vector<double> keep(p);
      for (int s = 0; s < p; ++s) keep[s] = static_cast<double>(r.copies[s][e]) * *r.capacity / load;
      const auto kept = apportion(*r.capacity, keep, e);
      for (int s = 0; s < p; ++s) r.copies[s][e] = kept[s];
    }
  }
}

// The uniform router's tokens from each sender to each chip: one per copy, or with dedup the expected
// number of distinct tokens among the copies to the chip's expert instances.
void moe_uniform_dispatch(const MoeConfig& config, MoeRouting& r) {
  const int E = config.experts, k = config.top_k, p = r.p;
  const int I = static_cast<int>(r.instance_chip.size());
  for (int s = 0; s < p; ++s)
    for (int c = 0; c < p; ++c) {
      const std::uint64_t N = config.tokens_of(s);
      double sum = 0;
      int held = 0;  // expert instances on c
      for (int i = 0; i < I; ++i)
        if (r.instance_chip[i] == c) sum += static_cast<double>(r.instance_copies[s][i]), ++held;
      double tokens = sum;
      if (config.dedup && held > 1 && N > 0) {
        // P(none of a token's k picks on c), drawing without replacement: q = c's share of the picks.
        const double q = sum / (static_cast<double>(N) * k);
        double none = 1;
        for (int j = 0; j < k; ++j) none *= std::max(0.0, 1 - q / (1 - static_cast<double>(j) / E));
        tokens = std::clamp(std::round(N * (1 - none)), std::ceil(sum / std::min(k, held)), sum);
      }
      r.dispatch_tokens[s][c] = static_cast<std::uint64_t>(tokens);
    }
}

// The uniform router: the expected split of the copies, over the experts and then evenly over each
// expert's instances `homes` (largest remainder, rotated by sender).
void moe_route_uniform(const MoeConfig& config, const std::vector<double>& w,
                       const std::vector<std::vector<int>>& homes, MoeRouting& r) {
  moe_uniform_copies(config, w, r);
  for (int s = 0; s < r.p; ++s)
    for (int e = 0; e < config.experts; ++e) {
      const auto parts = apportion(r.copies[s][e], std::vector<double>(homes[e].size(), 1.0), s + e);
      for (std::size_t h = 0; h < homes[e].size(); ++h) r.instance_copies[s][homes[e][h]] = parts[h];
    }
  moe_uniform_dispatch(config, r);
}

// Into `picked`: `k` distinct experts for one token, drawn from `state` by weight `w` (`cumulative`:
// its running sums); under heavy skew, after 64 k draws, the heaviest not picked yet.
void moe_pick_experts(std::uint64_t& state, const std::vector<double>& w,
                      const std::vector<double>& cumulative, int k, std::vector<int>& picked) {
  const int E = static_cast<int>(w.size());
  picked.clear();
  for (int tries = 0; static_cast<int>(picked.size()) < k;) {
    int e;
    if (++tries < 64 * k) {  // draw by weight, again if already picked
      const double u = uniform01(state) * cumulative.back();
      e = static_cast<int>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
      e = std::min(e, E - 1);
      if (w[e] <= 0 || std::find(picked.begin(), picked.end(), e) != picked.end()) continue;
    } else {  // heavy skew: take the heaviest expert not picked yet
      e = -1;
      for (int x = 0; x < E; ++x)
        if (std::find(picked.begin(), picked.end(), x) == picked.end() && (e < 0 || w[x] > w[e])) e = x;
    }
    picked.push_back(e);
  }
}

// Node-limited routing (max_nodes M > 0): a token first draws M distinct nodes (node_chips chips each; an
// expert's node is its first home's) by their experts' summed weight, then its k experts among those
// nodes' experts by weight (fewer when those nodes hold fewer than k experts with weight).
struct NodeLimit {
  NodeLimit(const MoeConfig& config, const std::vector<double>& w, const std::vector<std::vector<int>>& homes,
            const MoeRouting& r)
      : k(config.top_k), m(config.max_nodes) {
    if (m <= 0) return;
    const int E = config.experts, nodes = (r.p + config.node_chips - 1) / config.node_chips;
    node_of.resize(E);
    node_w.assign(nodes, 0);
    for (int e = 0; e < E; ++e) node_of[e] = r.instance_chip[homes[e].front()] / config.node_chips;
    for (int e = 0; e < E; ++e) node_w[node_of[e]] += w[e];
    node_cumulative.resize(nodes);
    std::partial_sum(node_w.begin(), node_w.end(), node_cumulative.begin());
    masked.resize(E), cumulative.resize(E);
  }
  void pick(std::uint64_t& state, const std::vector<double>& w, std::vector<int>& picked) {
    const int live =
        static_cast<int>(std::count_if(node_w.begin(), node_w.end(), [](double x) { return x > 0; }));
    moe_pick_experts(state, node_w, node_cumulative, std::min(m, live), nodes);
    int available = 0;
    for (std::size_t e = 0; e < w.size(); ++e) {
      const bool in = std::find(nodes.begin(), nodes.end(), node_of[e]) != nodes.end();
      masked[e] = in ? w[e] : 0.0;
      available += masked[e] > 0;
    }
    std::partial_sum(masked.begin(), masked.end(), cumulative.begin());
    moe_pick_experts(state, masked, cumulative, std::min(k, available), picked);
  }
  int k, m;
  std::vector<int> node_of, nodes;
  std::vector<double> node_w, node_cumulative, masked, cumulative;
};

// The random router: every token of every sender draws its experts (seed + `batch`, the sender and the
// token), first come first served up to the capacity, alternating over each expert's instances `homes`;
// with dedup a token goes once to each chip it picks.
void moe_route_random(const MoeConfig& config, const std::vector<double>& w,
                      const std::vector<std::vector<int>>& homes, int batch, MoeRouting& r) {
  std::vector<double> cumulative(config.experts);
  std::partial_sum(w.begin(), w.end(), cumulative.begin());
  std::vector<int> picked;
  std::vector<std::uint64_t> arrived(config.experts, 0);
  std::vector<int> chips_of_token;
  NodeLimit limited(config, w, homes, r);
  std::uint64_t most = 0;
  for (int s = 0; s < r.p; ++s) most = std::max(most, config.tokens_of(s));
  for (std::uint64_t t = 0; t < most; ++t)
    for (int s = 0; s < r.p; ++s) {
      if (t >= config.tokens_of(s)) continue;
      std::uint64_t state = config.seed + static_cast<std::uint64_t>(batch);
      state = next_random(state) ^ (static_cast<std::uint64_t>(s) << 32) ^ t;
      if (config.max_nodes > 0)
        limited.pick(state, w, picked);
      else
        moe_pick_experts(state, w, cumulative, config.top_k, picked);
      chips_of_token.clear();
      for (int e : picked) {
        if (r.capacity && arrived[e] >= *r.capacity) continue;  // dropped
        ++arrived[e];
        ++r.copies[s][e];
        const int i = homes[e][(t + static_cast<std::uint64_t>(s)) % homes[e].size()];  // alternate homes
        ++r.instance_copies[s][i];
        const int c = r.instance_chip[i];
        if (!config.dedup ||
            std::find(chips_of_token.begin(), chips_of_token.end(), c) == chips_of_token.end()) {
          chips_of_token.push_back(c);
          ++r.dispatch_tokens[s][c];
        }
      }
    }
}

// The totals of `r`'s copies: per expert, per instance, and those the capacity dropped.
void moe_total_loads(MoeRouting& r) {
  const int I = static_cast<int>(r.instance_chip.size());
  std::uint64_t kept = 0;
  for (int s = 0; s < r.p; ++s)
    for (int e = 0; e < r.experts; ++e) r.expert_load[e] += r.copies[s][e], kept += r.copies[s][e];
  r.instance_load.assign(I, 0);
  for (int s = 0; s < r.p; ++s)
    for (int i = 0; i < I; ++i) r.instance_load[i] += r.instance_copies[s][i];
  r.dropped = r.routed - kept;
}

}  // namespace

MoeRouting place_instances(const MoeConfig& config, int p) {
  MoeRouting r;
  r.p = p, r.experts = config.experts;
  const std::vector<double> w = expert_weights(config);
  r.owner = place_experts(config.experts, p, config.placement, w);
  place_replicas(r, w, config.hot_replicated(p), config.replicas);
  return r;
}

MoeRouting route_tokens(const MoeConfig& config, int p, int batch) {
  const std::vector<double> w = expert_weights(config);
  MoeRouting r = moe_empty_routing(config, p);
  const std::vector<std::vector<int>> homes = moe_expert_homes(r);
  if (config.router == "uniform")
    moe_route_uniform(config, w, homes, r);
  else
    moe_route_random(config, w, homes, batch, r);
  moe_total_loads(r);
  return r;
}

MoeSizes moe_sizes(const MoeConfig& config) {
  return {static_cast<std::uint64_t>(dtype_size(config.dispatch_dtype)),
          static_cast<std::uint64_t>(dtype_size(config.combine_dtype)), dtype_bytes(config.weight_dtype)};
}

TrafficMatrix dispatch_matrix(const MoeRouting& routing, std::uint64_t hidden, std::uint64_t element_bytes) {
  std::vector<std::vector<std::uint64_t>> rows(routing.p, std::vector<std::uint64_t>(routing.p));
  for (int s = 0; s < routing.p; ++s)
    for (int c = 0; c < routing.p; ++c) rows[s][c] = routing.dispatch_tokens[s][c] * hidden * element_bytes;
  return TrafficMatrix(rows);
}

TrafficMatrix combine_matrix(const MoeRouting& routing, std::uint64_t hidden, std::uint64_t element_bytes) {
  std::vector<std::vector<std::uint64_t>> rows(routing.p, std::vector<std::uint64_t>(routing.p));
  for (int s = 0; s < routing.p; ++s)
    for (int c = 0; c < routing.p; ++c) rows[c][s] = routing.dispatch_tokens[s][c] * hidden * element_bytes;
  return TrafficMatrix(rows);
}

ExpertCompute expert_compute(const MoeRouting& routing, int chip, const MoeConfig& config,
                             const ParamSet& params, int chunks) {
  const double H = static_cast<double>(config.hidden);
  const double F = static_cast<double>(config.ffn == 0 ? config.hidden : config.ffn);
  const MoeSizes sizes = moe_sizes(config);
  double copies = 0, weights = 0, experts = 0;
  for (std::size_t i = 0; i < routing.instance_chip.size(); ++i)
    if (routing.instance_chip[i] == chip && routing.instance_load[i] > 0) {
      copies += static_cast<double>(routing.instance_load[i]), ++experts;
      weights += 3 * H * F * static_cast<double>(sizes.weight);
    }
  ExpertCompute out;
  out.flops = 6 * H * F * copies / chunks;
  out.bytes = weights + H * static_cast<double>(sizes.dispatch + sizes.combine) * copies / chunks;
  ChipWork work;
  work.gemm_flops = out.flops, work.gemm_dtype = config.weight_dtype, work.bytes = out.bytes;
  // The grouped GEMM's M: an expert's tokens (the mean over the chip's experts that have any).
  work.rows = experts > 0 ? copies / chunks / experts : 0;
  work.kernels = copies > 0 ? 3 : 0;  // gate-up, activation, down
  if (copies > 0)  // the grouped GEMMs, for a chip profile's kernel tables: gate-up (2F, H), down (H, F)
    for (const auto& [n, k] : {std::pair{2 * F, H}, {H, F}})
      work.ops.push_back(gemm_kernel(KernelClass::kGroupedGemm, config.weight_dtype, work.rows, n, k, experts,
                                     static_cast<double>(sizes.weight)));
  const ChipTime t = ChipModel(params).time(work);
  out.memory_bound = t.memory_bound();
  out.tabled = t.tabled, out.fell_back = t.fell_back;
  out.seconds = t.seconds();
  return out;
}

std::vector<double> read_expert_load(const std::string& path) {
  const std::string name = "expert load '" + path + "'";
  const std::string text = read_input_file(path, name, "a JSON array or CSV of numbers, one per expert");
  std::vector<double> out;
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    nlohmann::json j;
    try {
      j = parse_json_input(text, name);
    } catch (const std::exception& e) {
      throw InputError(name + ": " + json_error_text(e));
    }
    for (const auto& v : j) {
      if (!v.is_number()) throw InputError(name + ": every entry must be a number");
      out.push_back(v.get<double>());
    }
  } else {
    std::string item;
    std::stringstream in(text);
    while (in >> std::ws && std::getline(in, item, ',')) {
      std::stringstream words(item);
      for (std::string word; words >> word;) {
        char* end = nullptr;
        const double v = std::strtod(word.c_str(), &end);
        if (end == word.c_str() || *end != '\0') throw InputError(name + ": '" + word + "' is not a number");
        out.push_back(v);
      }
    }
  }
  check_expert_load(out, name);
  return out;
}

void check_expert_load(const std::vector<double>& loads, const std::string& name) {
  double total = 0;
  for (double v : loads) {
    if (!(v >= 0) || !std::isfinite(v)) throw InputError(name + ": loads must be finite numbers >= 0");
    total += v;
  }
  if (loads.empty() || total <= 0) throw InputError(name + ": no positive load");
  // Only the ratios count, but they are taken of the sum: one past the largest double is no share.
  if (!std::isfinite(total))
    throw InputError(name +
                     ": the loads add up past the largest number (1.8e308); scale them down, only "
                     "their ratios count");
}

MoeConfig moe_config_from_json(const nlohmann::json& w, const std::string& file) {
  const std::string where = "workload file '" + file + "'";
  MoeConfig c;
  read_options(moe_options(), w, where, {"workload", "description", "set"}, c);
  c.overrides = set_overrides(w, where);
  with_context(where, [&] { c.validate(); });
  return c;
}

}  // namespace ultrasim
