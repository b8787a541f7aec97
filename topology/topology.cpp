#include "topology/topology.hpp"

#include <algorithm>
#include <cmath>

#include <boost/graph/connected_components.hpp>

#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {

void check_topology_size(const std::string& spec, double chips, double links) {
  if (chips <= kMaxTopologyChips && links <= kMaxTopologyLinks) return;
  if (links == 0)
    throw InputError(spec + " would have " + shortest_number(chips) + " chips, over the limit of " +
                     shortest_number(kMaxTopologyChips) + " chips");
  throw InputError(spec + " would have " + shortest_number(chips) + " chips and " + shortest_number(links) +
                   " links, over the limit of " + shortest_number(kMaxTopologyChips) + " chips and " +
                   shortest_number(kMaxTopologyLinks) + " links");
}

Topology::Topology(std::string spec, ParamSet params, std::vector<std::string> tiers)
    : spec_(std::move(spec)), params_(std::move(params)), tiers_(std::move(tiers)) {}

Vertex Topology::add_chip(int server, int rack, int domain) {
  Vertex v = boost::add_vertex(graph_);
  int rank = static_cast<int>(chips_.size());
  graph_[v] = Node{NodeKind::kChip, "chip" + std::to_string(rank), rank, server, rack, 0.0, domain};
  chips_.push_back(v);
  return v;
}

Vertex Topology::add_switch(const std::string& name, double latency) {
  if (!(latency >= 0) || !std::isfinite(latency))
    throw InputError("switch " + name + ": latency must be a finite time >= 0");
  Vertex v = boost::add_vertex(graph_);
  graph_[v] = Node{NodeKind::kSwitch, name, -1, -1, -1, latency};
  switches_.push_back(v);
  return v;
}

int Topology::add_link(Vertex a, Vertex b, const std::string& tier, double raw_bandwidth, double latency,
                       double efficiency, int lanes) {
  auto tier_it = std::find(tiers_.begin(), tiers_.end(), tier);
  if (tier_it == tiers_.end()) throw std::logic_error("link tier '" + tier + "' is not declared");
  if (a == b) throw InputError("link from " + graph_[a].name + " to itself");
  std::string name = graph_[a].name + "-" + graph_[b].name;
  if (!(raw_bandwidth > 0) || !std::isfinite(raw_bandwidth))
    throw InputError("link " + name + ": bandwidth must be finite and > 0, got " +
                     shortest_number(raw_bandwidth));
  if (!(efficiency > 0) || efficiency > 1)
    throw InputError("link " + name + ": efficiency must be in (0, 1], got " + shortest_number(efficiency));
  if (!(latency >= 0) || !std::isfinite(latency))
    throw InputError("link " + name + ": latency must be a finite time >= 0, got " +
                     shortest_number(latency));
  if (lanes < 1) throw InputError("link " + name + ": lanes must be >= 1");
  // Parallel links between the same pair get a suffix so that every name stays unique.
  int parallel = 0;
  for (auto [e, end] = boost::out_edges(a, graph_); e != end; ++e)
    if (boost::target(*e, graph_) == b) ++parallel;
  if (parallel > 0) name += "#" + std::to_string(parallel);
  int index = static_cast<int>(links_.size());
  boost::add_edge(a, b, LinkRef{index}, graph_);
  links_.push_back(Link{name, tier, static_cast<int>(tier_it - tiers_.begin()), raw_bandwidth, efficiency,
                        latency, a, b, index, lanes});
  return index;
}

void Topology::validate() const {
  if (chips_.empty()) throw InputError("topology " + spec_ + " has no chips");
  if (chips_.size() == 1) return;
  std::vector<int> component(boost::num_vertices(graph_));
  boost::connected_components(graph_, component.data());
  for (Vertex c : chips_) {
    if (component[c] != component[chips_[0]])
      throw InputError("topology " + spec_ + " is disconnected: " + graph_[c].name + " cannot reach " +
                       graph_[chips_[0]].name);
  }
}

void Topology::keep_chips(const std::vector<int>& ranks, std::string spec) {
  std::vector<Vertex> kept;
  for (Vertex v : chips_) graph_[v].rank = -1;
  std::vector<int> fabric;
  for (int r : ranks) {
    fabric.push_back(fabric_rank(r));
    kept.push_back(chips_.at(r));
    graph_[kept.back()].rank = static_cast<int>(kept.size()) - 1;
  }
  chips_ = std::move(kept);
  fabric_ranks_ = std::move(fabric);
  route_sources_.clear();  // a part of a symmetric fabric need not be symmetric
  spec_ = std::move(spec);
}

void Topology::scale_efficiency(double factor) {
  for (Link& link : links_) link.efficiency *= factor;
}

void Topology::add_chip_link_latency(const std::string& tier, double latency) {
  for (Link& link : links_)
    if (link.tier == tier &&
        (graph_[link.a].kind == NodeKind::kChip || graph_[link.b].kind == NodeKind::kChip))
      link.latency += latency;
}

double Topology::injection_bandwidth(int rank) const {
  double total = 0;
  for (auto [e, end] = boost::out_edges(chip(rank), graph_); e != end; ++e) total += link(*e).bandwidth();
  return total;
}

}  // namespace ultrasim
