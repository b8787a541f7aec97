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
// Every chip has one link per tier (its x8 PCIe Gen6 lanes aggregated): to its server's first-level
// NeuronSwitch-v1 (server tier), to its rack's second-level NeuronSwitch-v1 (rack tier), and directly
// to the same-index chip in the other rack (cross_rack tier). Cross-rack traffic to any other chip is
// forwarded through a chip (chip_forwarding); with it off such chips are unreachable.
#include "topology/errors.hpp"
#include "topology/registry.hpp"

namespace ultrasim {
namespace {

constexpr int kRacks = 2;  // the figure shows two second-level switches, one per half of the servers
constexpr const char* kGen6Efficiency = "60/64";  // PCIe Gen6 FLIT framing: ~60 of 64 GB/s per x8 link

}  // namespace

GeneratorEntry trn3_generator() {
  std::vector<ParamSpec> params{
      {"chips_per_server", "4", Unit::kCount, "Trainium3 chips per server", "hardware.md [AWS]"},
      {"servers_per_rack", "18", Unit::kCount, "servers under one second-level switch",
       "hardware.md [AWS text + INF from figure]"},
      {"server_bandwidth", "256GBps", Unit::kRate,
       "raw per-chip bandwidth to the server switch, per direction (4 x8 Gen6 links)", "hardware.md [AWS]"},
      {"server_latency", "500ns", Unit::kTime, "latency of a chip-to-server-switch link",
       "assumption (not published; Trn2 hops ~1-2 us end to end)"},
      {"server_efficiency", kGen6Efficiency, Unit::kRatio, "payload fraction of the server links' raw rate",
       "hardware.md [INF]: PCIe Gen6 FLIT framing"},
      {"rack_bandwidth", "320GBps", Unit::kRate,
       "raw per-chip bandwidth to the rack switch, per direction (5 x8 Gen6 links)", "hardware.md [AWS]"},
      {"rack_latency", "500ns", Unit::kTime, "latency of a chip-to-rack-switch link", "assumption"},
      {"rack_efficiency", kGen6Efficiency, Unit::kRatio, "payload fraction of the rack links' raw rate",
       "hardware.md [INF]: PCIe Gen6 FLIT framing"},
      {"cross_rack_bandwidth", "128GBps", Unit::kRate,
       "raw bandwidth of the direct link to the peer chip in the other rack, per direction (2 x8)",
       "hardware.md [AWS]"},
      {"cross_rack_latency", "500ns", Unit::kTime, "latency of the direct cross-rack link", "assumption"},
      {"cross_rack_efficiency", kGen6Efficiency, Unit::kRatio,
       "payload fraction of the cross-rack links' raw rate", "hardware.md [INF]: PCIe Gen6 FLIT framing"},
      {"switch_latency", "500ns", Unit::kTime, "time a flow spends crossing a NeuronSwitch-v1",
       "assumption (hop latency not published)"},
      {"switch_reduction", "false", Unit::kBool,
       "NeuronSwitches reduce and multicast (switch-reduce); a what-if: NeuronSwitch-v1 is a PCIe switch",
       "hardware.md [AWS]: NeuronSwitch-v1 is a PCIe switch fabric; no in-network reduction published"},
      {"switch_reduce_bandwidth", "inf", Unit::kOptRate, "rate of a switch's reduction engine (what-if)",
       "assumption: line rate (free)"},
      {"chip_forwarding", "true", Unit::kBool, "chips relay cross-rack traffic to non-peer chips",
       "assumption: needed to reach the other rack except the direct peer"},
  };
  GeneratorEntry entry{
      "trn3", "trn3", "AWS Trn3 Gen2 UltraServer: 144 chips, 36 servers x 4, two rack switches", params,
      [](const std::string& spec, const std::string& args, const ParamSet& p) {
        if (!args.empty()) throw InputError("topology trn3 takes no arguments; got 'trn3:" + args + "'");
        int per_server = static_cast<int>(p.number("chips_per_server"));
        int per_rack = static_cast<int>(p.number("servers_per_rack"));
        if (per_server * per_rack * kRacks > 1 << 20) throw InputError("trn3 with more than 1048576 chips");
        Topology t(spec, p, {"server", "rack", "cross_rack"});
        t.set_chip_forwarding(p.flag("chip_forwarding"));
        double sw = p.number("switch_latency");
        std::vector<Vertex> racks;
        for (int r = 0; r < kRacks; ++r)
          racks.push_back(t.add_switch("rack" + std::to_string(r) + "_switch", sw));
        for (int r = 0; r < kRacks; ++r) {
          for (int s = 0; s < per_rack; ++s) {
            int server = r * per_rack + s;
            Vertex server_switch = t.add_switch("server" + std::to_string(server) + "_switch", sw);
            for (int i = 0; i < per_server; ++i) {
              Vertex c = t.add_chip(server, r);
              t.add_link(c, server_switch, "server", p.number("server_bandwidth"), p.number("server_latency"),
                         p.number("server_efficiency"));
              t.add_link(c, racks[r], "rack", p.number("rack_bandwidth"), p.number("rack_latency"),
                         p.number("rack_efficiency"));
            }
          }
        }
        // The direct links: chip i of server k <-> chip i of server k + per_rack.
        for (int server = 0; server < per_rack; ++server)
          for (int i = 0; i < per_server; ++i)
            t.add_link(t.chip(server * per_server + i), t.chip((server + per_rack) * per_server + i),
                       "cross_rack", p.number("cross_rack_bandwidth"), p.number("cross_rack_latency"),
                       p.number("cross_rack_efficiency"));
        return t;
      }};
  // Bisection, with n = chips per rack and R, X a chip's delivered rack-switch and cross-rack rates.
  // A balanced split puts a chips of rack 0 and n - a of rack 1 on side A; let m = min(a, n - a).
  // Each rack switch has at least m of its chips on its far side: >= 2mR cut. At most m peer pairs lie
  // wholly on side A (min(a, n - a)) and m wholly on side B, so >= n - 2m cross-rack links are cut.
  // Total >= nX + 2m(R - X): for R >= X least at m = 0, the split between the racks, which cuts exactly
  // the n cross-rack links: n x X (trn3: 72 x 120 GB/s = 8.64 TB/s). With R < X a split inside the
  // racks may cut less: no formula then.
  entry.bisection = [](const Topology& t) -> std::optional<double> {
    const ParamSet& p = t.params();
    double rack = p.number("rack_bandwidth") * p.number("rack_efficiency");
    double cross = p.number("cross_rack_bandwidth") * p.number("cross_rack_efficiency");
    if (rack < cross) return std::nullopt;
    return p.number("chips_per_server") * p.number("servers_per_rack") * cross;
  };
  return entry;
}

}  // namespace ultrasim
