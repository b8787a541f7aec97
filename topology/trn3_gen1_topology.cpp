// trn3-gen1 — the AWS Trainium3 Gen1 UltraServer: 64 chips = 4 servers x 16 chips.
// Source: ../shared/reference/hardware.md and the Gen1 figure (img/trn3-ultraserver-gen1.png).
//
//   server0: chip0..15  --+                   +--  server2: chip32..47
//                         pair0_switch      pair1_switch
//   server1: chip16..31 --+                   +--  server3: chip48..63
//   chip i of server 0 <-- direct --> chip i of server 2;  chip i of server 1 <-- direct --> chip i of server
//   3
//
// Read off the figure [INF]: servers 0 and 1 share one NeuronSwitch-v1 and servers 2 and 3 the other;
// every chip has one link to its pair's switch (also its only path to the other chips of its own server:
// the figure shows no server switch) and one direct link to the same-index chip of the server beside it
// in the other pair (0 <-> 2, 1 <-> 3). Other chips of the other pair are reached through a chip
// (chip_forwarding). The per-chip split of links between the tiers is not published: the defaults assume
// the Gen2 chip's 11 x8 NeuronLink-v4 links, 2 of them direct as in Gen2 and the other 9 to the switch.
// `rack` is the pair (the switch domain).
#include <algorithm>

#include "topology/base/errors.hpp"
#include "topology/registry.hpp"

namespace ultrasim {
namespace {

constexpr int kPairs = 2;           // [INF from figure]: two NeuronSwitch-v1, one per pair of servers
constexpr int kServersPerPair = 2;  // [AWS]: 4 servers

// trn3-gen1's parameters, typed; trn3_gen1_table() declares each with its default and source.
struct Trn3Gen1Params {
  int chips_per_server = 0;
  double pair_bandwidth = 0;
  int pair_lanes = 0;
  double pair_latency = 0, pair_efficiency = 0;
  double cross_pair_bandwidth = 0;
  int cross_pair_lanes = 0;
  double cross_pair_latency = 0, cross_pair_efficiency = 0;
  double switch_latency = 0;
  SwitchReduce reduce;
  bool chip_forwarding = false;
};

const ParamTable<Trn3Gen1Params>& trn3_gen1_table() {
  using P = Trn3Gen1Params;
  const std::string x8 =
      "assumption: the Gen2 chip has 11 x8 PCIe Gen6 links (4+5+2, hardware.md [AWS]); Gen1's split is not "
      "published";
  static const ParamTable<P> table =
      ParamTable<P>{}
          .add({"chips_per_server", "16", Unit::kCount, "Trainium3 chips per server", "hardware.md [AWS]"},
               &P::chips_per_server)
          .add({"pair_bandwidth", "576GBps", Unit::kRate,
                "raw per-chip bandwidth to its pair's switch, per direction (9 x8 Gen6 links)",
                x8 + ": 9 to the switch"},
               &P::pair_bandwidth)
          .add({"pair_lanes", "9", Unit::kCount, "x8 links bundled in a chip's switch link",
                x8 + ": 9 to the switch"},
               &P::pair_lanes)
          .add({"pair_latency", "500ns", Unit::kTime, "latency of a chip-to-switch link",
                "assumption (as trn3)"},
               &P::pair_latency)
          .add({"pair_efficiency", "60/64", Unit::kRatio, "payload fraction of the switch links' raw rate",
                "hardware.md [INF]: PCIe Gen6 FLIT framing"},
               &P::pair_efficiency)
          .add({"cross_pair_bandwidth", "128GBps", Unit::kRate,
                "raw bandwidth of the direct link to the peer chip in the other pair, per direction (2 x8)",
                x8 + ": 2 direct, as Gen2's cross-rack link"},
               &P::cross_pair_bandwidth)
          .add({"cross_pair_lanes", "2", Unit::kCount, "x8 links bundled in a chip's direct link",
                x8 + ": 2 direct, as Gen2"},
               &P::cross_pair_lanes)
          .add({"cross_pair_latency", "500ns", Unit::kTime, "latency of the direct link",
                "assumption (as trn3)"},
               &P::cross_pair_latency)
          .add(
              {"cross_pair_efficiency", "60/64", Unit::kRatio,
               "payload fraction of the direct links' raw rate", "hardware.md [INF]: PCIe Gen6 FLIT framing"},
              &P::cross_pair_efficiency)
          .add({"switch_latency", "500ns", Unit::kTime, "time a flow spends crossing a NeuronSwitch-v1",
                "assumption (hop latency not published)"},
               &P::switch_latency)
          .nest(switch_reduce_table("NeuronSwitches reduce and multicast (switch-reduce; what-if)",
                                    "hardware.md [AWS]: NeuronSwitch-v1 is a PCIe switch fabric; no "
                                    "in-network reduction published",
                                    "rate of a switch's reduction engine (what-if)",
                                    "assumption: line rate (free)"),
                &P::reduce)
          .add({"chip_forwarding", "true", Unit::kBool,
                "chips relay traffic to the other pair's non-peer chips",
                "assumption: needed to reach the other pair except the direct peer"},
               &P::chip_forwarding);
  return table;
}

// trn3-gen1's topology for parameters `params` (`args` must be empty).
Topology trn3_gen1_build(const std::string& spec, const std::string& args, const ParamSet& params) {
  if (!args.empty()) throw InputError("topology trn3-gen1 takes no arguments; got 'trn3-gen1:" + args + "'");
  const Trn3Gen1Params p = trn3_gen1_table().read(params);
  const int per_server = p.chips_per_server;
  check_topology_size(spec, per_server * 4.0);
  Topology t(spec, params, {"pair", "cross_pair"});
  t.set_chip_forwarding(p.chip_forwarding);
  for (int pair = 0; pair < kPairs; ++pair) {
    Vertex sw = t.add_switch("pair" + std::to_string(pair) + "_switch", p.switch_latency);
    for (int s = 0; s < kServersPerPair; ++s)
      for (int i = 0; i < per_server; ++i)
        t.add_link(t.add_chip(pair * kServersPerPair + s, pair), sw, "pair", p.pair_bandwidth, p.pair_latency,
                   p.pair_efficiency, p.pair_lanes);
  }
  // Server s of pair 0 faces server s of pair 1: chip i of server s <-> chip i of server s + 2.
  const int half = kServersPerPair * per_server;
  for (int c = 0; c < half; ++c)
    t.add_link(t.chip(c), t.chip(c + half), "cross_pair", p.cross_pair_bandwidth, p.cross_pair_latency,
               p.cross_pair_efficiency, p.cross_pair_lanes);
  return t;
}

}  // namespace

GeneratorEntry trn3_gen1_generator() {
  GeneratorEntry entry{"trn3-gen1", "trn3-gen1",
                       "AWS Trn3 Gen1 UltraServer: 64 chips, 4 servers x 16, a switch per server pair",
                       trn3_gen1_table().specs(), trn3_gen1_build};
  // Exact, by trn3's argument: a balanced cut costs at least P/2 x min(direct, switch) per chip and both
  // are reached (between the pairs; or servers 0, 2 against 1, 3, which cuts every switch in half and no
  // direct link).
  entry.bisection = [](const Topology& t) -> std::optional<double> {
    const Trn3Gen1Params p = trn3_gen1_table().read(t.params());
    double cross = p.cross_pair_bandwidth * p.cross_pair_efficiency;
    double pair = p.pair_bandwidth * p.pair_efficiency;
    return t.chip_count() / 2 * std::min(cross, pair);
  };
  entry.stack = "neuron";  // collectives/stacks/neuron.json
  return entry;
}

}  // namespace ultrasim
