#include "topology/routing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <set>

#include "topology/errors.hpp"

namespace ultrasim {
namespace {

// A route's cost, compared lexicographically: latency (equal within a relative 1e-9, so that sums of
// the same latencies in another order tie), hops, then the tiers crossed in order.
struct Label {
  double latency = std::numeric_limits<double>::infinity();
  int hops = 0;
  std::vector<int> tiers;
};

bool better(const Label& x, const Label& y) {
  if (std::isinf(x.latency) || std::isinf(y.latency)) return x.latency < y.latency;
  double tolerance = 1e-9 * std::max(std::abs(x.latency), std::abs(y.latency));
  if (std::abs(x.latency - y.latency) > tolerance) return x.latency < y.latency;
  if (x.hops != y.hops) return x.hops < y.hops;
  return x.tiers < y.tiers;
}

Path finish_path(const Topology& topology, std::vector<Vertex> vertices, std::vector<Hop> hops) {
  Path path;
  path.vertices = std::move(vertices);
  path.hops = std::move(hops);
  path.bandwidth = std::numeric_limits<double>::infinity();
  for (const Hop& hop : path.hops) {
    const Link& link = topology.links()[hop.link];
    path.latency += link.latency;
    path.bandwidth = std::min(path.bandwidth, link.bandwidth());
  }
  for (std::size_t i = 1; i + 1 < path.vertices.size(); ++i)
    if (topology.node(path.vertices[i]).kind == NodeKind::kSwitch)
      path.latency += topology.node(path.vertices[i]).latency;
  return path;
}

}  // namespace

Path path_through(const Topology& topology, const std::vector<Vertex>& vertices) {
  std::vector<Hop> hops;
  const Graph& g = topology.graph();
  for (std::size_t i = 0; i + 1 < vertices.size(); ++i) {
    auto [e, found] = boost::edge(vertices[i], vertices[i + 1], g);
    if (!found)
      throw InputError("no link between " + g[vertices[i]].name + " and " + g[vertices[i + 1]].name);
    const Link& link = topology.link(e);
    hops.push_back(Hop{link.index, link.a == vertices[i]});
  }
  return finish_path(topology, vertices, std::move(hops));
}

Routes::Routes(const Topology& topology)
    : topology_(topology), trees_(boost::num_vertices(topology.graph())) {}

Routes::Tree& Routes::tree(Vertex from) const {
  if (trees_[from]) return *trees_[from];
  const Graph& g = topology_.graph();
  const std::size_t n = boost::num_vertices(g);
  auto tree = std::make_unique<Tree>();
  tree->parent_link.assign(n, -1);
  tree->parent.assign(n, from);
  tree->reached.assign(n, 0);
  tree->latency.assign(n, 0.0);
  tree->hops.assign(n, 0);
  std::vector<Label> label(n);
  label[from].latency = 0;
  // Label-setting search; the order set breaks exact ties by vertex id, so results are deterministic.
  auto cmp = [&](Vertex x, Vertex y) {
    if (better(label[x], label[y])) return true;
    if (better(label[y], label[x])) return false;
    return x < y;
  };
  std::set<Vertex, decltype(cmp)> frontier(cmp);
  frontier.insert(from);
  while (!frontier.empty()) {
    Vertex u = *frontier.begin();
    frontier.erase(frontier.begin());
    tree->reached[u] = 1;
    tree->latency[u] = label[u].latency;
    tree->hops[u] = label[u].hops;
    bool relays = u == from || g[u].kind == NodeKind::kSwitch || topology_.chip_forwarding();
    if (!relays) continue;
    for (auto [e, end] = boost::out_edges(u, g); e != end; ++e) {
      Vertex v = boost::target(*e, g);
      if (tree->reached[v]) continue;
      const Link& link = topology_.link(*e);
      Label candidate{label[u].latency + link.latency + (u != from ? g[u].latency : 0.0), label[u].hops + 1,
                      label[u].tiers};
      candidate.tiers.push_back(link.tier_index);
      // Among parallel links, the first added wins (strictly better only).
      if (better(candidate, label[v])) {
        frontier.erase(v);
        label[v] = std::move(candidate);
        tree->parent[v] = u;
        tree->parent_link[v] = link.index;
        frontier.insert(v);
      }
    }
  }
  trees_[from] = std::move(tree);
  return *trees_[from];
}

std::optional<Path> Routes::find(Vertex from, Vertex to) const {
  const Tree& t = tree(from);
  if (!t.reached[to]) return std::nullopt;
  std::vector<Vertex> vertices{to};
  std::vector<Hop> hops;
  for (Vertex v = to; v != from; v = t.parent[v]) {
    const Link& link = topology_.links()[t.parent_link[v]];
    hops.push_back(Hop{link.index, link.a == t.parent[v]});
    vertices.push_back(t.parent[v]);
  }
  std::reverse(vertices.begin(), vertices.end());
  std::reverse(hops.begin(), hops.end());
  return finish_path(topology_, std::move(vertices), std::move(hops));
}

Path Routes::between(int src_rank, int dst_rank) const {
  std::optional<Path> path = find(topology_.chip(src_rank), topology_.chip(dst_rank));
  if (!path)
    throw SimulationError("chip" + std::to_string(dst_rank) + " is unreachable from chip" +
                          std::to_string(src_rank) + " on " + topology_.spec() +
                          (topology_.chip_forwarding() ? "" : " (chip_forwarding is off)"));
  return *path;
}

double Routes::min_chip_latency() const {
  int p = topology_.chip_count();
  if (p < 2) return 0;
  double best = std::numeric_limits<double>::infinity();
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b)
      if (a != b) {
        const Tree& t = tree(topology_.chip(a));
        if (t.reached[topology_.chip(b)]) best = std::min(best, t.latency[topology_.chip(b)]);
      }
  return best;
}

int Routes::diameter() const {
  int p = topology_.chip_count(), longest = 0;
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b)
      if (a != b) {
        const Tree& t = tree(topology_.chip(a));
        if (!t.reached[topology_.chip(b)]) between(a, b);  // throws, naming the pair
        longest = std::max(longest, t.hops[topology_.chip(b)]);
      }
  return longest;
}

}  // namespace ultrasim
