#include "topology/platform_plan.hpp"

#include <limits>
#include <map>

namespace ultrasim {
namespace {

// The bandwidth given to a switch crossing: it carries latency only, so any rate far above every link
// is equivalent (a fatpipe never shares).
constexpr double kCrossingBandwidth = 1e18;

std::string crossing_name(const std::string& switch_name) {
  return switch_name + "_crossing";
}

}  // namespace

std::vector<PlanHop> plan_hops(const Topology& topology, const PlatformPlan& plan, const Path& path) {
  std::vector<PlanHop> hops;
  for (std::size_t i = 0; i < path.hops.size(); ++i) {
    if (i > 0) {
      const Node& via = topology.node(path.vertices[i]);
      if (via.kind == NodeKind::kSwitch && via.latency > 0) {
        for (std::size_t k = topology.links().size(); k < plan.links.size(); ++k)
          if (plan.links[k].name == crossing_name(via.name))
            hops.push_back(PlanHop{static_cast<int>(k), true});
      }
    }
    hops.push_back(PlanHop{path.hops[i].link, path.hops[i].up});
  }
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
  for (const Link& link : topology.links()) {
    plan.links.push_back(PlanLink{link.name, link.bandwidth(), link.latency, false});
  }
  for (Vertex s : topology.switches())
    if (topology.node(s).latency > 0)
      plan.links.push_back(
          PlanLink{crossing_name(topology.node(s).name), kCrossingBandwidth, topology.node(s).latency, true});

  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b)
      if (a != b) plan.routes.push_back(PlanRoute{a, b, plan_hops(topology, plan, routes.between(a, b))});
  for (std::size_t k = 0; k < topology.switches().size(); ++k) {
    Vertex s = topology.switches()[k];
    for (int a = 0; a < p; ++a) {
      auto there = routes.find(topology.chip(a), s);
      auto back = routes.find(s, topology.chip(a));
      if (there) plan.routes.push_back(PlanRoute{a, plan.switch_host[k], plan_hops(topology, plan, *there)});
      if (back) plan.routes.push_back(PlanRoute{plan.switch_host[k], a, plan_hops(topology, plan, *back)});
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
  plan.routes.push_back(PlanRoute{src, src + 1, plan_hops(topology, plan, path)});
  return k;
}

}  // namespace ultrasim
