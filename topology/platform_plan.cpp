#include "topology/platform_plan.hpp"

namespace ultrasim {
std::vector<PlanHop> plan_hops(const Path& path) {
  std::vector<PlanHop> hops;
  for (const Hop& hop : path.hops) hops.push_back(PlanHop{hop.link, hop.up});
  return hops;
}

PlatformPlan make_platform_plan(const Topology& topology, const Routes& routes) {
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

  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b)
      if (a != b) plan.routes.push_back(PlanRoute{a, b, plan_hops(routes.between(a, b))});
  for (std::size_t k = 0; k < topology.switches().size(); ++k) {
    Vertex s = topology.switches()[k];
    for (int a = 0; a < p; ++a) {
      auto there = routes.find(topology.chip(a), s);
      auto back = routes.find(s, topology.chip(a));
      if (there) plan.routes.push_back(PlanRoute{a, plan.switch_host[k], plan_hops(*there)});
      if (back) plan.routes.push_back(PlanRoute{plan.switch_host[k], a, plan_hops(*back)});
    }
  }
  return plan;
}

std::string endpoint_name(const Topology& topology, int rank, int path_index) {
  std::string name = topology.node(topology.chip(rank)).name;
  return path_index == 0 ? name : name + "#" + std::to_string(path_index);
}

int add_path(PlatformPlan& plan, const Topology& topology, int a, int b, const Path& path) {
  int k = ++plan.extra_paths;
  int src = static_cast<int>(plan.hosts.size());
  plan.hosts.push_back(endpoint_name(topology, a, k));
  plan.hosts.push_back(endpoint_name(topology, b, k));
  plan.routes.push_back(PlanRoute{src, src + 1, plan_hops(path)});
  return k;
}

}  // namespace ultrasim
