// trn3 — the AWS Trainium3 Gen2 UltraServer: 144 chips = 2 racks x 18 servers x 4 chips.
// Source: ../shared/reference/hardware.md (AWS trn3-arch text and figure).
//
//   rack 0: servers 0..17                         rack 1: servers 18..35
//   +-------------- rack0_switch --------------+  +-------------- rack1_switch --------------+
//   |  server0: chip0..3 -- server0_switch     |  |  server18: chip72..75 -- server18_switch |
//   |  ...                                     |  |  ...                                     |
//   +------------------------------------------+  +------------------------------------------+
//   chip i of server k  <---- cross_rack link (no switch) ---->  chip i of server k+18
//
// Every chip has one graph link per tier, bundling its x8 PCIe Gen6 links (lanes): 4 to its server's
// first-level NeuronSwitch-v1 (server tier), 5 to its rack's second-level NeuronSwitch-v1 (rack tier),
// 2 directly to the same-index chip in the other rack (cross_rack tier). Cross-rack traffic to any other
// chip is forwarded through a chip (chip_forwarding); with it off such chips are unreachable.
//
// rack_switch=chips builds the second level from physical switch chips instead of one logical crossbar,
// so that a plane or a chip can fail: rack_planes planes per rack, each chip's rack links one per plane
// (each carries rack_bandwidth / rack_planes). A plane whose ports (the rack's chips) fit one switch chip
// of radix rack_switch_radix is that chip; otherwise it is a non-blocking two-level leaf/spine:
//
//   rack0_plane2_spine0 .. rack0_plane2_spine{S-1}   S spines, as few as fit: every leaf has R/2 uplinks,
//        |    \                                       R/2/S of them bundled to each spine (S divides R/2)
//   rack0_plane2_leaf0 ... rack0_plane2_leaf{L-1}     L = ceil(chips / (R/2)) leaves, R/2 chips each
//     |  |  |
//   the rack's chips, one rack link each
//
// With radix 20 and 72 chips per rack: 8 leaves of 10 chips and 5 spines, each leaf-spine link 2 x8.
#include <algorithm>

#include "topology/base/errors.hpp"
#include "topology/registry.hpp"

namespace ultrasim {
namespace {

constexpr int kRacks = 2;  // the figure shows two second-level switches, one per half of the servers
constexpr const char* kGen6Efficiency = "60/64";  // PCIe Gen6 FLIT framing: ~60 of 64 GB/s per x8 link

// trn3's parameters, typed; trn3_table() declares each with its default and source.
struct Trn3Params {
  int chips_per_server = 0, servers_per_rack = 0;
  double server_bandwidth = 0, server_latency = 0, server_efficiency = 0;
  int server_lanes = 0;
  double rack_bandwidth = 0, rack_latency = 0, rack_efficiency = 0;
  std::string rack_switch;
  int rack_planes = 0, rack_switch_radix = 0;
  double cross_rack_bandwidth = 0, cross_rack_latency = 0, cross_rack_efficiency = 0;
  int cross_rack_lanes = 0;
  double switch_latency = 0;
  SwitchReduce reduce;
  bool chip_forwarding = false;
};

const ParamTable<Trn3Params>& trn3_table() {
  using P = Trn3Params;
  static const ParamTable<P> table =
      ParamTable<P>{}
          .add({"chips_per_server", "4", Unit::kCount, "Trainium3 chips per server", "hardware.md [AWS]"},
               &P::chips_per_server)
          .add({"servers_per_rack", "18", Unit::kCount, "servers under one second-level switch",
                "hardware.md [AWS text + INF from figure]"},
               &P::servers_per_rack)
          .add({"server_bandwidth", "256GBps", Unit::kRate,
                "raw per-chip bandwidth to the server switch, per direction (4 x8 Gen6 links)",
                "hardware.md [AWS]"},
               &P::server_bandwidth)
          .add({"server_latency", "500ns", Unit::kTime, "latency of a chip-to-server-switch link",
                "assumption (not published; Trn2 hops ~1-2 us end to end)"},
               &P::server_latency)
          .add(
              {"server_efficiency", kGen6Efficiency, Unit::kRatio,
               "payload fraction of the server links' raw rate", "hardware.md [INF]: PCIe Gen6 FLIT framing"},
              &P::server_efficiency)
          .add({"server_lanes", "4", Unit::kCount, "x8 links bundled in a chip's server-tier link",
                "hardware.md [AWS]"},
               &P::server_lanes)
          .add({"rack_bandwidth", "320GBps", Unit::kRate,
                "raw per-chip bandwidth to the rack switch, per direction (5 x8 Gen6 links)",
                "hardware.md [AWS]"},
               &P::rack_bandwidth)
          .add({"rack_latency", "500ns", Unit::kTime,
                "latency of a chip-to-rack-switch link (and, with rack_switch=chips, of a leaf-spine link)",
                "assumption"},
               &P::rack_latency)
          .add({"rack_efficiency", kGen6Efficiency, Unit::kRatio,
                "payload fraction of the rack links' raw rate", "hardware.md [INF]: PCIe Gen6 FLIT framing"},
               &P::rack_efficiency)
          .add({"rack_switch",
                "crossbar",
                Unit::kChoice,
                "second-level switch: one logical crossbar per rack, or built from switch chips in planes",
                "crossbar: the AWS figure's one NeuronSwitch-v1 per rack; chips: a what-if with failable "
                "planes",
                {"crossbar", "chips"}},
               &P::rack_switch)
          .add({"rack_planes", "5", Unit::kCount,
                "x8 links from a chip to the rack tier: the rack link's lanes; with rack_switch=chips, one "
                "plane "
                "each",
                "hardware.md [AWS]: 5 x8 links per chip to the rack tier"},
               &P::rack_planes)
          .add({"rack_switch_radix", "20", Unit::kCount, "ports of one switch chip (rack_switch=chips)",
                "hardware.md [3P]: first NeuronSwitch is a 160-lane, 20-port PCIe switch"},
               &P::rack_switch_radix)
          .add({"cross_rack_bandwidth", "128GBps", Unit::kRate,
                "raw bandwidth of the direct link to the peer chip in the other rack, per direction (2 x8)",
                "hardware.md [AWS]"},
               &P::cross_rack_bandwidth)
          .add({"cross_rack_latency", "500ns", Unit::kTime, "latency of the direct cross-rack link",
                "assumption"},
               &P::cross_rack_latency)
          .add({"cross_rack_efficiency", kGen6Efficiency, Unit::kRatio,
                "payload fraction of the cross-rack links' raw rate",
                "hardware.md [INF]: PCIe Gen6 FLIT framing"},
               &P::cross_rack_efficiency)
          .add({"cross_rack_lanes", "2", Unit::kCount, "x8 links bundled in a chip's cross-rack link",
                "hardware.md [AWS]"},
               &P::cross_rack_lanes)
          .add({"switch_latency", "500ns", Unit::kTime, "time a flow spends crossing a NeuronSwitch-v1",
                "assumption (hop latency not published)"},
               &P::switch_latency)
          .nest(switch_reduce_table("NeuronSwitches reduce and multicast (switch-reduce); a what-if: "
                                    "NeuronSwitch-v1 is a PCIe switch",
                                    "hardware.md [AWS]: NeuronSwitch-v1 is a PCIe switch fabric; no "
                                    "in-network reduction published",
                                    "rate of a switch's reduction engine (what-if)",
                                    "assumption: line rate (free)"),
                &P::reduce)
          .add({"chip_forwarding", "true", Unit::kBool, "chips relay cross-rack traffic to non-peer chips",
                "assumption: needed to reach the other rack except the direct peer"},
               &P::chip_forwarding);
  return table;
}

// One plane of a rack's second level built from switch chips: the chips' attachment points and the
// links inside the plane.
std::vector<Vertex> build_plane(Topology& t, const Trn3Params& p, const std::string& name, int ports) {
  const int radix = p.rack_switch_radix;
  const double sw = p.switch_latency;
  const double port_rate = p.rack_bandwidth / p.rack_planes;
  if (ports <= radix) return std::vector<Vertex>(ports, t.add_switch(name, sw));
  const int down = radix / 2;  // leaf: half its ports to chips, half up to the spines
  const int leaves = (ports + down - 1) / down;
  if (down < 1 || leaves > radix)
    throw InputError("trn3: rack_switch_radix=" + std::to_string(radix) + " cannot connect " +
                     std::to_string(ports) +
                     " chips in two levels (at most radix x radix/2 = " + std::to_string(radix * down) + ")");
  // As few spines as fit: S divides the R/2 uplinks of a leaf and has a port for every leaf's bundle.
  int spines = 1;
  while (down % spines != 0 || leaves * (down / spines) > radix) ++spines;
  const int bundle = down / spines;
  std::vector<Vertex> leaf, spine;
  for (int s = 0; s < spines; ++s) spine.push_back(t.add_switch(name + "_spine" + std::to_string(s), sw));
  for (int l = 0; l < leaves; ++l) {
    leaf.push_back(t.add_switch(name + "_leaf" + std::to_string(l), sw));
    for (Vertex s : spine)
      t.add_link(leaf.back(), s, "rack_spine", port_rate * bundle, p.rack_latency, p.rack_efficiency, bundle);
  }
  std::vector<Vertex> attach;
  for (int c = 0; c < ports; ++c) attach.push_back(leaf[c / down]);
  return attach;
}

// Exact bisection (delivered B/s per direction). A balanced cut that moves x chips of one rack to the
// other rack's side crosses >= 2x rack links (each rack switch sits on one side) and >= P/2 - 2x
// cross_rack links (at most x peer pairs can sit together on each side), so it costs at least
// min(P/2 x cross_rack, P/2 x rack) per chip bandwidth; both ends are reached: the cut between the racks,
// and the cut through every rack's middle keeping peer servers k, k+18 together (needs an even number
// of servers per rack unless cross_rack is the cheaper). The chips mode's planes are non-blocking, so the
// same holds there.
std::optional<double> trn3_bisection(const Topology& t) {
  const Trn3Params p = trn3_table().read(t.params());
  double half = p.chips_per_server * p.servers_per_rack;
  double cross = p.cross_rack_bandwidth * p.cross_rack_efficiency;
  double rack = p.rack_bandwidth * p.rack_efficiency;
  if (rack < cross && static_cast<long>(p.servers_per_rack) % 2 != 0) return std::nullopt;
  return half * std::min(cross, rack);
}

// Adds the racks' second-level switches to `t`; attach[r][plane][c]: where chip c of rack r plugs into
// that plane (crossbar: one plane, whose link bundles the planes' lanes).
std::vector<std::vector<std::vector<Vertex>>> trn3_add_rack_switches(Topology& t, const Trn3Params& p,
                                                                     bool chips, int rack_ports) {
  const double sw = p.switch_latency;
  std::vector<std::vector<std::vector<Vertex>>> attach(kRacks);
  if (!chips) {
    for (int r = 0; r < kRacks; ++r)
      attach[r].push_back(
          std::vector<Vertex>(rack_ports, t.add_switch("rack" + std::to_string(r) + "_switch", sw)));
    return attach;
  }
  t.set_multipath_default("stripe");  // a chip's rack traffic spreads over its planes
  const int planes = p.rack_planes;
  for (int r = 0; r < kRacks; ++r)
    for (int k = 0; k < planes; ++k)
      attach[r].push_back(
          build_plane(t, p, "rack" + std::to_string(r) + "_plane" + std::to_string(k), rack_ports));
  return attach;
}

// Adds the servers to `t` rack by rack: each server's switch, then its chips, each linked to the server
// switch and to every plane of its rack.
void trn3_add_servers(Topology& t, const Trn3Params& p, bool chips,
                      const std::vector<std::vector<std::vector<Vertex>>>& attach) {
  const int per_server = p.chips_per_server;
  const int per_rack = p.servers_per_rack;
  const int planes = p.rack_planes;
  const double sw = p.switch_latency;
  const double rack_link = chips ? p.rack_bandwidth / planes : p.rack_bandwidth;
  const int rack_lanes = chips ? 1 : planes;
  for (int r = 0; r < kRacks; ++r) {
    for (int s = 0; s < per_rack; ++s) {
      int server = r * per_rack + s;
      Vertex server_switch = t.add_switch("server" + std::to_string(server) + "_switch", sw);
      for (int i = 0; i < per_server; ++i) {
        Vertex c = t.add_chip(server, r);
        t.add_link(c, server_switch, "server", p.server_bandwidth, p.server_latency, p.server_efficiency,
                   p.server_lanes);
        for (const auto& plane : attach[r])
          t.add_link(c, plane[s * per_server + i], "rack", rack_link, p.rack_latency, p.rack_efficiency,
                     rack_lanes);
      }
    }
  }
}

// Adds the direct links to `t`: chip i of server k <-> chip i of server k + servers_per_rack.
void trn3_add_cross_rack_links(Topology& t, const Trn3Params& p) {
  const int per_server = p.chips_per_server;
  const int per_rack = p.servers_per_rack;
  for (int server = 0; server < per_rack; ++server)
    for (int i = 0; i < per_server; ++i)
      t.add_link(t.chip(server * per_server + i), t.chip((server + per_rack) * per_server + i), "cross_rack",
                 p.cross_rack_bandwidth, p.cross_rack_latency, p.cross_rack_efficiency, p.cross_rack_lanes);
}

// trn3's topology for parameters `p` (`args` must be empty).
Topology trn3_build(const std::string& spec, const std::string& args, const ParamSet& params) {
  if (!args.empty()) throw InputError("topology trn3 takes no arguments; got 'trn3:" + args + "'");
  const Trn3Params p = trn3_table().read(params);
  int per_server = p.chips_per_server;
  int per_rack = p.servers_per_rack;
  check_topology_size(spec, static_cast<double>(per_server) * per_rack * kRacks);
  const bool chips = p.rack_switch == "chips";
  const int rack_ports = per_server * per_rack;
  std::vector<std::string> tiers{"server", "rack", "cross_rack"};
  if (chips && rack_ports > p.rack_switch_radix) tiers.push_back("rack_spine");
  Topology t(spec, params, tiers);
  t.set_chip_forwarding(p.chip_forwarding);
  const auto attach = trn3_add_rack_switches(t, p, chips, rack_ports);
  trn3_add_servers(t, p, chips, attach);
  trn3_add_cross_rack_links(t, p);
  return t;
}

}  // namespace

GeneratorEntry trn3_generator() {
  GeneratorEntry entry{"trn3", "trn3",
                       "AWS Trn3 Gen2 UltraServer: 144 chips, 36 servers x 4, two rack switches",
                       trn3_table().specs(), trn3_build};
  entry.bisection = trn3_bisection;
  entry.stack = "neuron";  // collectives/stacks/neuron.json
  return entry;
}

}  // namespace ultrasim
