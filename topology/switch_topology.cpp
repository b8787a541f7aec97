// switch:N — N chips, each with one link to a single switch.
//
//        chip0   chip1  ...  chipN-1
//           \      |          /
//            +---- switch0 --+
#include "topology/errors.hpp"
#include "topology/registry.hpp"
#include "topology/units.hpp"

namespace ultrasim {

GeneratorEntry switch_generator() {
  GeneratorEntry entry{"switch", "switch:N", "N chips on one switch (a star)", simple_link_params(),
                       [](const std::string& spec, const std::string& args, const ParamSet& params) {
                         if (args.empty())
                           throw InputError("topology switch needs a chip count, e.g. switch:16");
                         long n = parse_count(args);
                         Topology t(spec, params, {"link"});
                         Vertex hub = t.add_switch("switch0", params.number("switch_latency"));
                         for (long i = 0; i < n; ++i)
                           t.add_link(t.add_chip(), hub, "link", params.number("link_bandwidth"),
                                      params.number("link_latency"));
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
