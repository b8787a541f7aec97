// dragonfly — Kim, Dally, Scott and Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology",
// ISCA 2008. Groups of `routers_per_group` (a) routers; each router has `chips_per_router` (p) chips,
// a local link to every other router of its group, and `global_links_per_router` (h) global links to
// other groups. The defaults are the paper's balanced choice a = 2p = 2h (p = h = 2, a = 4), with the
// largest group count g = a h + 1: 9 groups, 36 routers, 72 chips, radix p + a - 1 + h = 7.
//
//   group 0: r0 - r1 - r2 - r3  (all-to-all "local" links)      chips: p per router ("terminal" links)
//             \    |     |   \______ "global" links, one between every pair of groups
//   group 1..g-1 alike
//
// Global links, "consecutive" arrangement: group i's global port k (k = 0 .. g-2, on router k / h) goes
// to group (i + k + 1) mod g. With fewer than a h + 1 groups the ports beyond g-2 stay unused.
// Routing is minimal (at most one global link: local, global, local). Routes are the lowest-latency
// ones, which are minimal exactly when global_latency > 2 link_latency + switch_latency (a detour through
// a third group saves a local link and a router but costs a second global link), so the generator
// rejects latencies that break it. Chips do not forward.
// Rank = (group x a + router) x p + position; a router's chips share a `server`, a group a `rack`.
#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "topology/registry.hpp"

namespace ultrasim {
namespace {

// dragonfly's parameters, typed: its shape, the shared link parameters, then global_latency.
struct DragonflyParams {
  long chips_per_router = 0, routers_per_group = 0, global_links_per_router = 0;
  std::string group_count;  // "auto" or a count
  SimpleLinks links;
  double global_latency = 0;
};

const ParamTable<DragonflyParams>& dragonfly_table() {
  using P = DragonflyParams;
  const char* kBalanced = "Kim, Dally, Scott, Abts, ISCA 2008: balanced a = 2p = 2h";
  static const ParamTable<P> table =
      ParamTable<P>{}
          .add({"chips_per_router", "2", Unit::kCount, "chips (terminals) per router, p", kBalanced},
               &P::chips_per_router)
          .add({"routers_per_group", "4", Unit::kCount, "routers per group, a (all-to-all local links)",
                kBalanced},
               &P::routers_per_group)
          .add({"global_links_per_router", "2", Unit::kCount, "global links per router, h", kBalanced},
               &P::global_links_per_router)
          .add({"group_count",
                "auto",
                Unit::kChoice,
                "groups, g; auto: a h + 1, the most for which every pair of groups has a global link",
                "Kim et al. 2008: g = a h + 1 for the largest dragonfly",
                {"auto", "N"}},
               &P::group_count)
          .nest(simple_link_table(), &P::links)
          .add({"global_latency", "1.5us", Unit::kTime, "latency of a global (inter-group) link",
                "assumption: long optical cables; must exceed 2 link_latency + switch_latency for "
                "minimal routing"},
               &P::global_latency);
  return table;
}

// A time as the messages show it: "1.5e-06s".
std::string time_text(double s) {
  return shortest_number(s) + "s";
}

// The group count g of `par`, a h + 1 for auto; throws InputError when a group's a h global ports cannot
// reach the other g - 1 groups.
long dragonfly_groups(const DragonflyParams& par) {
  const long ports = par.routers_per_group * par.global_links_per_router, most = ports + 1;
  const long g = par.group_count == "auto" ? most : choice_count(par.group_count);
  if (g > most)
    throw InputError("dragonfly: " + std::to_string(g) + " groups need " + std::to_string(g - 1) +
                     " global links per group, but a group has routers_per_group x "
                     "global_links_per_router = " +
                     std::to_string(ports) + "; at most " + std::to_string(most) + " groups");
  return g;
}

// Throws InputError when, with g groups, a route over two global links could be the shorter one.
void check_minimal_routing(const DragonflyParams& par, long g) {
  const SimpleLinks& l = par.links;
  if (g >= 3 && par.routers_per_group >= 2 && !(par.global_latency > 2 * l.latency + l.switch_latency))
    throw InputError(
        "dragonfly: minimal routing needs global_latency > 2 x link_latency + "
        "switch_latency (" +
        time_text(par.global_latency) + " <= 2 x " + time_text(l.latency) + " + " +
        time_text(l.switch_latency) +
        "); otherwise a route through a third group, over two global links, is shorter");
}

// dragonfly's topology for parameters `params` (`args` must be empty).
Topology dragonfly_build(const std::string& spec, const std::string& args, const ParamSet& params) {
  if (!args.empty())
    throw InputError("topology dragonfly takes no arguments; got 'dragonfly:" + args +
                     "'; set its shape with --set chips_per_router=, routers_per_group=, "
                     "global_links_per_router=, group_count=");
  const DragonflyParams par = dragonfly_table().read(params);
  const long p = par.chips_per_router, a = par.routers_per_group, h = par.global_links_per_router;
  const long g = dragonfly_groups(par);
  check_topology_size(spec, static_cast<double>(g) * a * p);
  check_minimal_routing(par, g);
  const double bw = par.links.bandwidth, lat = par.links.latency, eff = par.links.efficiency,
               sw = par.links.switch_latency;

  Topology t(spec, params, {"terminal", "local", "global"});
  t.set_chip_forwarding(false);
  std::vector<std::vector<Vertex>> router(g);
  for (long i = 0; i < g; ++i) {
    for (long r = 0; r < a; ++r) {
      Vertex v = t.add_switch("group" + std::to_string(i) + "_router" + std::to_string(r), sw);
      for (long c = 0; c < p; ++c)
        t.add_link(t.add_chip(static_cast<int>(i * a + r), static_cast<int>(i)), v, "terminal", bw, lat, eff);
      for (Vertex u : router[i]) t.add_link(u, v, "local", bw, lat, eff);
      router[i].push_back(v);
    }
  }
  // Pair (i, j), i < j: port j - i - 1 of group i, port g - (j - i) - 1 of group j.
  for (long i = 0; i < g; ++i)
    for (long j = i + 1; j < g; ++j)
      t.add_link(router[i][(j - i - 1) / h], router[j][(g - (j - i) - 1) / h], "global", bw,
                 par.global_latency, eff);
  return t;
}

}  // namespace

GeneratorEntry dragonfly_generator() {
  return {"dragonfly", "dragonfly", "groups of all-to-all routers joined by global links (Kim et al. 2008)",
          dragonfly_table().specs(), dragonfly_build};
}

}  // namespace ultrasim
