// mesh:N — a full mesh: N chips, one direct link between every pair, no switches. Every route is one
// link, so chips never forward (chip_forwarding off) and each chip has N-1 links.
//
//   mesh:4     chip0 ---- chip1
//                | \    / |
//                |   \/   |        6 links = N(N-1)/2
//                |   /\   |
//              chip3 ---- chip2
#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "topology/registry.hpp"

namespace ultrasim {
namespace {

constexpr long kMaxChips = 4096;  // N(N-1)/2 links: 8.4 M at the limit

}  // namespace

GeneratorEntry mesh_generator() {
  GeneratorEntry entry{
      "mesh", "mesh:N", "N chips, a direct link between every pair (full mesh), no switches",
      simple_link_params(), [](const std::string& spec, const std::string& args, const ParamSet& p) {
        if (args.empty()) throw InputError("topology mesh needs a chip count, e.g. mesh:8");
        long n = parse_count(args);
        check_topology_size(spec, static_cast<double>(n), static_cast<double>(n) * (n - 1) / 2);
        if (n > kMaxChips)
          throw InputError("mesh:" + args + " has more than " + std::to_string(kMaxChips) +
                           " chips (a full mesh has N(N-1)/2 links)");
        Topology t(spec, p, {"link"});
        t.set_chip_forwarding(false);
        for (long i = 0; i < n; ++i) t.add_chip();
        const SimpleLinks l = simple_link_table().read(p);
        for (long a = 0; a < n; ++a)
          for (long b = a + 1; b < n; ++b)
            t.add_link(t.chip(static_cast<int>(a)), t.chip(static_cast<int>(b)), "link", l.bandwidth,
                       l.latency, l.efficiency);
        return t;
      }};
  entry.example = "mesh:8";
  // Any split of N chips into halves of floor(N/2) and ceil(N/2) cuts every link between them.
  entry.bisection = [](const Topology& t) -> std::optional<double> {
    long n = t.chip_count();
    const SimpleLinks l = simple_link_table().read(t.params());
    return static_cast<double>((n / 2) * (n - n / 2)) * l.bandwidth * l.efficiency;
  };
  return entry;
}

}  // namespace ultrasim
