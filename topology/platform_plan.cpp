#include "topology/platform_plan.hpp"

#include <algorithm>
#include <stdexcept>

namespace ultrasim {
std::vector<PlanHop> plan_hops(const Path& path) {
  std::vector<PlanHop> hops;
  for (const Hop& hop : path.hops) hops.push_back(PlanHop{hop.link, hop.up});
  return hops;
}

PlatformPlan make_platform_plan(const Topology& topology, const Routes& routes, PlanPaths paths) {
  PlatformPlan plan;
  const int p = topology.chip_count();
  for (int r = 0; r < p; ++r) plan.hosts.push_back(topology.node(topology.chip(r)).name);
  for (Vertex s : topology.switches()) {
    plan.switch_host.push_back(static_cast<int>(plan.hosts.size()));
    plan.hosts.push_back(topology.node(s).name);
  }
  auto half_switch = [&](std::size_t v) {
    const Node& node = topology.node(v);
    return node.kind == NodeKind::kSwitch ? node.latency / 2 : 0.0;
  };
  for (const Link& link : topology.links())
    plan.links.push_back(
        PlanLink{link.name, link.bandwidth(), link.latency + half_switch(link.a) + half_switch(link.b)});

  const bool hashed_routes = paths == PlanPaths::kTaken && routes.policy() == Multipath::kHash;
  plan.hashed_routes = hashed_routes;
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b)
      if (a != b)
        plan.routes.push_back(PlanRoute{
            a, b, plan_hops(hashed_routes ? routes.message_paths(a, b).front().path : routes.between(a, b))});
  for (std::size_t k = 0; k < topology.switches().size(); ++k) {
    Vertex s = topology.switches()[k];
    for (int a = 0; a < p; ++a) {
      auto there = routes.find(topology.chip(a), s);
      auto back = routes.find(s, topology.chip(a));
      if (there) plan.routes.push_back(PlanRoute{a, plan.switch_host[k], plan_hops(*there)});
      if (back) plan.routes.push_back(PlanRoute{plan.switch_host[k], a, plan_hops(*back)});
    }
  }
  if (routes.policy() == Multipath::kSingle || hashed_routes) return plan;
  std::vector<std::vector<Path>> sets;  // per ordered pair (a, b), a != b, in (a, b) order
  std::size_t planes = 1;
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b)
      if (a != b) {
        sets.push_back(routes.equal_paths(topology.chip(a), topology.chip(b)));
        planes = std::max(planes, sets.back().size());
      }
  for (std::size_t k = 1; k < planes; ++k)
    for (int r = 0; r < p; ++r) {
      plan.endpoints[{r, static_cast<int>(k)}] = static_cast<int>(plan.hosts.size());
      plan.hosts.push_back(endpoint_name(topology, r, static_cast<int>(k)));
    }
  std::size_t pair = 0;
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b)
      if (a != b) {
        const auto& set = sets[pair++];
        for (std::size_t k = 1; k < set.size(); ++k)
          plan.routes.push_back(PlanRoute{a, plan.endpoints.at({b, static_cast<int>(k)}), plan_hops(set[k])});
      }
  return plan;
}

std::string endpoint_name(const Topology& topology, int rank, int path_index) {
  std::string name = topology.node(topology.chip(rank)).name;
  return path_index == 0 ? name : name + "#" + std::to_string(path_index);
}

void add_path(PlatformPlan& plan, const Topology& topology, int a, int b, const Path& path, int k) {
  if (k < 1) throw std::logic_error("add_path: path index must be >= 1 (0 is the route)");
  auto [at, added] = plan.endpoints.try_emplace({b, k}, static_cast<int>(plan.hosts.size()));
  if (added) plan.hosts.push_back(endpoint_name(topology, b, k));
  for (const PlanRoute& route : plan.routes)
    if (route.src == a && route.dst == at->second)
      throw std::logic_error("add_path: " + endpoint_name(topology, a, 0) + " already has path " +
                             std::to_string(k) + " to " + endpoint_name(topology, b, 0));
  plan.routes.push_back(PlanRoute{a, at->second, plan_hops(path)});
}

int add_epoch_paths(PlatformPlan& plan, const Topology& topology, const Routes& routes, int first) {
  const int p = topology.chip_count();
  struct Added {
    int a, b, k;
    std::vector<PlanHop> hops;
  };
  std::vector<Added> added;
  int width = 1;
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b) {
      if (a == b || !routes.reachable(topology.chip(a), topology.chip(b))) continue;
      for (const PathShare& share : routes.message_paths(a, b)) {
        width = std::max(width, share.index + 1);
        added.push_back(Added{a, b, first + share.index, plan_hops(share.path)});
      }
    }
  for (int k = first; k < first + width; ++k)
    for (int r = 0; r < p; ++r) {
      plan.endpoints[{r, k}] = static_cast<int>(plan.hosts.size());
      plan.hosts.push_back(endpoint_name(topology, r, k));
    }
  for (Added& route : added)
    plan.routes.push_back(PlanRoute{route.a, plan.endpoints.at({route.b, route.k}), std::move(route.hops)});
  return width;
}

}  // namespace ultrasim
