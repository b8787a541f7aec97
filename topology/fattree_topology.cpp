// fattree:K — the three-tier k-ary fat tree of Al-Fares, Loukissas and Vahdat, "A Scalable, Commodity
// Data Center Network Architecture", SIGCOMM 2008: K-port switches, K pods of K/2 edge and K/2
// aggregation switches, (K/2)^2 core switches, K^3/4 chips.
//
//              core0 .. core(K/2)^2-1          core j links to aggregation switch j / (K/2) of every pod
//             /     |     \   (K pods below)
//      pod0: agg0 .. agg(K/2-1)                 every edge links to every aggregation switch of its pod
//             |  X  |
//            edge0 .. edge(K/2-1)               each edge switch has K/2 chips
//            | | |
//            chips: rank = (pod x K/2 + edge) x K/2 + position
//
// `oversubscription` (down:up bandwidth ratio at the edge) divides the rate of every switch-to-switch
// link: edge-aggregation and aggregation-core links carry link_bandwidth / oversubscription, so the
// aggregation layer stays 1:1 and the whole tree is oversubscription:1. Chips do not forward; the
// (K/2)^2 equal-cost paths between pods make the multipath default "hash" (ECMP).
// Chips under one edge switch share a `server`, chips of one pod a `rack`.
#include <algorithm>

#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "topology/registry.hpp"

namespace ultrasim {
namespace {

long parse_k(const std::string& args) {
  if (args.empty()) throw InputError("topology fattree needs the switch radix K, e.g. fattree:4 (16 chips)");
  long k = parse_count(args);
  if (k % 2 != 0 || k < 2)
    throw InputError("fattree:" + args + ": K must be even (K-port switches, K/2 ports down and K/2 up), " +
                     "e.g. " + (k > 2 ? "fattree:" + std::to_string(k - 1) + " or " : std::string()) +
                     "fattree:" + std::to_string(k + 1));
  check_topology_size("fattree:" + args, static_cast<double>(k) * k * k / 4);  // K^3/4 chips
  return k;
}

// fattree's parameters, typed: the shared link parameters, then oversubscription.
struct FattreeParams {
  SimpleLinks links;
  double oversubscription = 1;
};

const ParamTable<FattreeParams>& fattree_table() {
  static const ParamTable<FattreeParams> table =
      ParamTable<FattreeParams>{}
          .nest(simple_link_table(), &FattreeParams::links)
          .add({"oversubscription", "1", Unit::kRatio,
                "edge down:up bandwidth ratio: switch-to-switch links carry link_bandwidth / this; "
                "1 = full bisection",
                "Al-Fares et al. 2008: 1 (rearrangeably non-blocking); higher values are what-ifs"},
               &FattreeParams::oversubscription);
  return table;
}

// fattree:K's topology (`args` is K) for parameters `params`.
Topology fattree_build(const std::string& spec, const std::string& args, const ParamSet& params) {
  const long k = parse_k(args), half = k / 2;
  const FattreeParams p = fattree_table().read(params);
  const double over = p.oversubscription;
  if (!(over > 0)) throw InputError("fattree: oversubscription must be > 0, got " + shortest_number(over));
  const double bw = p.links.bandwidth, lat = p.links.latency, eff = p.links.efficiency,
               sw = p.links.switch_latency;
  Topology t(spec, params, {"edge", "aggregation", "core"});
  t.set_chip_forwarding(false);
  t.set_multipath_default("hash");
  std::vector<Vertex> core;
  for (long j = 0; j < half * half; ++j) core.push_back(t.add_switch("core" + std::to_string(j), sw));
  for (long pod = 0; pod < k; ++pod) {
    const std::string prefix = "pod" + std::to_string(pod) + "_";
    std::vector<Vertex> agg;
    for (long a = 0; a < half; ++a) {
      agg.push_back(t.add_switch(prefix + "agg" + std::to_string(a), sw));
      for (long j = a * half; j < (a + 1) * half; ++j)
        t.add_link(agg[a], core[j], "core", bw / over, lat, eff);
    }
    for (long e = 0; e < half; ++e) {
      Vertex edge = t.add_switch(prefix + "edge" + std::to_string(e), sw);
      for (long h = 0; h < half; ++h)
        t.add_link(t.add_chip(static_cast<int>(pod * half + e), static_cast<int>(pod)), edge, "edge", bw, lat,
                   eff);
      for (Vertex a : agg) t.add_link(edge, a, "aggregation", bw / over, lat, eff);
    }
  }
  return t;
}

}  // namespace

GeneratorEntry fattree_generator() {
  GeneratorEntry entry{"fattree", "fattree:K",
                       "three-tier k-ary fat tree (Al-Fares 2008): K pods, K^3/4 chips",
                       fattree_table().specs(), fattree_build};
  entry.example = "fattree:4";
  // K/2 pods on each side: the cut is the K^3/8 chips' links of one half, or the pods' core uplinks,
  // (K/2) pods x (K/2)^2 links x B / oversubscription = K^3/8 B / oversubscription; the smaller one
  // (B = link_bandwidth x link_efficiency).
  entry.bisection = [](const Topology& t) -> std::optional<double> {
    const long k = parse_k(split_topology_spec(t.spec()).second);
    const FattreeParams p = fattree_table().read(t.params());
    return static_cast<double>(k * k * k / 8) * p.links.bandwidth * p.links.efficiency *
           std::min(1.0, 1.0 / p.oversubscription);
  };
  return entry;
}

}  // namespace ultrasim
