// ring:N — N chips in a cycle, chip i linked to chip i+1 mod N; chips forward traffic.
//
//   chip0 -- chip1 -- ... -- chipN-1
//     \_________________________/
// ring:2 has one link (not two parallel ones), ring:1 has none.
#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "topology/registry.hpp"

namespace ultrasim {

GeneratorEntry ring_generator() {
  GeneratorEntry entry{"ring", "ring:N", "N chips in a bidirectional ring, chips forward",
                       simple_link_params(),
                       [](const std::string& spec, const std::string& args, const ParamSet& params) {
                         if (args.empty()) throw InputError("topology ring needs a chip count, e.g. ring:8");
                         long n = parse_count(args);
                         check_topology_size(spec, static_cast<double>(n), static_cast<double>(n));
                         Topology t(spec, params, {"link"});
                         for (long i = 0; i < n; ++i) t.add_chip();
                         long links = n == 2 ? 1 : (n > 2 ? n : 0);
                         const SimpleLinks l = simple_link_table().read(params);
                         for (long i = 0; i < links; ++i)
                           t.add_link(t.chip(static_cast<int>(i)), t.chip(static_cast<int>((i + 1) % n)),
                                      "link", l.bandwidth, l.latency, l.efficiency);
                         if (n > 0) t.set_route_sources({0});  // a rotation maps chip 0 to any chip
                         return t;
                       }};
  entry.example = "ring:8";
  // Bisection: any split of a cycle into two non-empty arcs cuts at least two links, and cutting the
  // ring into two arcs of floor(N/2) and ceil(N/2) chips cuts exactly two: 2 x link bandwidth per
  // direction (ring:2 has one link: 1 x).
  entry.bisection = [](const Topology& t) -> std::optional<double> {
    return (t.chip_count() == 2 ? 1 : 2) * t.links().front().bandwidth();
  };
  return entry;
}

}  // namespace ultrasim
