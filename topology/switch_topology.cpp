// switch:N — N chips, each with one link to a single switch; with `planes` K > 1, to each of K
// switches (switch0 .. switchK-1), like NVLink planes of NVSwitch chips: a chip pair has K
// equal-cost paths and messages are striped over them unless `multipath` says otherwise.
//
//        chip0   chip1  ...  chipN-1
//           \      |          /
//            +---- switch0 --+         (and switch1 .. switchK-1 alike)
#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "topology/registry.hpp"

namespace ultrasim {
namespace {

// switch's parameters, typed: the shared link parameters, then `planes`.
struct SwitchParams {
  SimpleLinks links;
  int planes = 0;
};

const ParamTable<SwitchParams>& switch_table() {
  static const ParamTable<SwitchParams> table =
      ParamTable<SwitchParams>{}
          .nest(simple_link_table(), &SwitchParams::links)
          .add({"planes", "1", Unit::kCount,
                "switches, each linked to every chip (a chip's injection is planes x link_bandwidth)",
                "1: one switch; more: NVSwitch-like planes (hardware.md: NVL72 has 18)"},
               &SwitchParams::planes);
  return table;
}

}  // namespace

GeneratorEntry switch_generator() {
  GeneratorEntry entry{
      "switch", "switch:N", "N chips on one switch (a star), or on `planes` parallel switches",
      switch_table().specs(), [](const std::string& spec, const std::string& args, const ParamSet& params) {
        if (args.empty()) throw InputError("topology switch needs a chip count, e.g. switch:16");
        long n = parse_count(args);
        const SwitchParams p = switch_table().read(params);
        const SimpleLinks& l = p.links;
        check_topology_size(spec, static_cast<double>(n), static_cast<double>(n) * p.planes);
        Topology t(spec, params, {"link"});
        std::vector<Vertex> hubs;
        for (int k = 0; k < p.planes; ++k)
          hubs.push_back(t.add_switch("switch" + std::to_string(k), l.switch_latency));
        for (long i = 0; i < n; ++i) {
          Vertex chip = t.add_chip();
          for (Vertex hub : hubs) t.add_link(chip, hub, "link", l.bandwidth, l.latency, l.efficiency);
        }
        if (p.planes > 1) t.set_multipath_default("stripe");
        if (n > 0) t.set_route_sources({0});  // every chip is linked alike: any one stands for all
        return t;
      }};
  entry.example = "switch:8";
  // Bisection: a balanced split puts each switch on one side, so every chip on the other side has its
  // link to that switch cut; the smaller side has floor(N/2) chips: floor(N/2) x link bandwidth per
  // direction, per switch (where there are several, as planes, every chip links to each).
  entry.bisection = [](const Topology& t) -> std::optional<double> {
    return (t.chip_count() / 2) * t.switch_count() * t.links().front().bandwidth();
  };
  return entry;
}

}  // namespace ultrasim
