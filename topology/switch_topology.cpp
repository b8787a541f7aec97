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

GeneratorEntry switch_generator() {
  std::vector<ParamSpec> params = simple_link_params();
  params.push_back({"planes", "1", Unit::kCount,
                    "switches, each linked to every chip (a chip's injection is planes x link_bandwidth)",
                    "1: one switch; more: NVSwitch-like planes (hardware.md: NVL72 has 18)"});
  GeneratorEntry entry{
      "switch", "switch:N", "N chips on one switch (a star), or on `planes` parallel switches", params,
      [](const std::string& spec, const std::string& args, const ParamSet& params) {
        if (args.empty()) throw InputError("topology switch needs a chip count, e.g. switch:16");
        long n = parse_count(args);
        const int planes = static_cast<int>(params.number("planes"));
        check_topology_size(spec, static_cast<double>(n), static_cast<double>(n) * planes);
        Topology t(spec, params, {"link"});
        std::vector<Vertex> hubs;
        for (int k = 0; k < planes; ++k)
          hubs.push_back(t.add_switch("switch" + std::to_string(k), params.number("switch_latency")));
        for (long i = 0; i < n; ++i) {
          Vertex chip = t.add_chip();
          for (Vertex hub : hubs)
            t.add_link(chip, hub, "link", params.number("link_bandwidth"), params.number("link_latency"),
                       params.number("link_efficiency"));
        }
        if (planes > 1) t.set_multipath_default("stripe");
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
