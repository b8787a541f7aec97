// The fabric as a graph: chips (ranks 0..p-1) and switches as vertices, full-duplex links as edges.
// Bandwidths are per direction, in bytes per second, and what the simulator uses is the delivered rate
// (raw line rate x efficiency). Knows nothing of SimGrid.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "topology/base/params.hpp"

namespace ultrasim {

enum class NodeKind { kChip, kSwitch };

// The tier of a chip's scale-out link in cluster:K:PRESET: a route between two scale-up domains crosses
// exactly two links of it (out of the source chip's domain, into the destination's).
inline constexpr const char* kScaleOutTier = "nic";

// The largest topology any generator builds: 2^18 chips and 2^21 links (~250 MB of graph; any run or
// description then needs routes for p^2 chip pairs, which the memory guard weighs). Generators check their
// spec's counts with check_topology_size before building.
inline constexpr double kMaxTopologyChips = 1 << 18;
inline constexpr double kMaxTopologyLinks = 1 << 21;
// Throws InputError "SPEC would have N chips and M links, over the limit of ..." when either count,
// estimated from the spec alone, is over its limit; a generator that cannot count its links before it
// builds them passes only the chips (its links are then counted as they are added, by the memory guard).
void check_topology_size(const std::string& spec, double chips, double links = 0);

struct Node {
  NodeKind kind = NodeKind::kChip;
  std::string name;  // unique: "chip12", "server3_switch"
  int rank = -1;     // chips: 0..p-1; switches: -1
  int server = -1;   // grouping levels, -1 where the topology has none
  int rack = -1;
  double latency = 0;  // switches: the time a flow spends crossing it, in s
  int domain = -1;     // scale-up domain of a chip in a cluster:K:PRESET, -1 elsewhere
};

struct Link {
  std::string name;          // unique: "chip0-server0_switch"
  std::string tier;          // kind label: "server", "rack", "cross_rack", "link"
  int tier_index = 0;        // position of tier in Topology::tiers(): lower tiers win routing ties
  double raw_bandwidth = 0;  // per direction, B/s, the vendor's line rate
  double efficiency = 1;     // payload fraction of the raw rate
  double latency = 0;        // s
  std::size_t a = 0, b = 0;  // endpoint vertices as added: traversing a -> b is the link's "up" direction
  int index = 0;             // position in Topology::links()
  int lanes = 1;             // physical links bundled into this one (raw_bandwidth is their sum), e.g. 4 x8
  double bandwidth() const { return raw_bandwidth * efficiency; }  // delivered, per direction
};

// Edges carry only the index of their Link in Topology::links(), so copying a Topology never leaves a
// reference into another graph's storage.
struct LinkRef {
  int index = 0;
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, Node, LinkRef>;
using Vertex = Graph::vertex_descriptor;
using Edge = Graph::edge_descriptor;

// Where an imported topology came from, as its file records it: the spec that generated it and the
// parameters in effect then (name -> value in base units, as ParamSet::to_json writes them).
struct TopologyOrigin {
  std::string spec;
  nlohmann::json parameters = nlohmann::json::object();
};

class Topology {
 public:
  Topology(std::string spec, ParamSet params, std::vector<std::string> tiers);

  // Builders. Chips get consecutive ranks in the order they are added.
  Vertex add_chip(int server = -1, int rack = -1, int domain = -1);
  Vertex add_switch(const std::string& name, double latency);
  // Throws InputError on a non-positive bandwidth/efficiency, negative latency, unknown tier, self-loop.
  // `lanes` physical links bundled into one (raw_bandwidth is their total) count as `lanes` in summaries.
  int add_link(Vertex a, Vertex b, const std::string& tier, double raw_bandwidth, double latency,
               double efficiency = 1.0, int lanes = 1);

  // Checks the finished graph: at least one chip and, with more than one chip, connected.
  // Throws InputError naming the problem.
  void validate() const;

  const Graph& graph() const { return graph_; }
  const std::string& spec() const { return spec_; }
  const ParamSet& params() const { return params_; }
  const std::vector<std::string>& tiers() const { return tiers_; }
  int chip_count() const { return static_cast<int>(chips_.size()); }
  int switch_count() const { return static_cast<int>(switches_.size()); }
  int link_count() const { return static_cast<int>(boost::num_edges(graph_)); }
  Vertex chip(int rank) const { return chips_.at(rank); }
  const std::vector<Link>& links() const { return links_; }  // in creation order
  const std::vector<Vertex>& switches() const { return switches_; }
  const Node& node(Vertex v) const { return graph_[v]; }
  const Link& link(Edge e) const { return links_[graph_[e].index]; }
  // Whether chips relay traffic between other chips (direct topologies do; trn3: chip_forwarding).
  bool chip_forwarding() const { return chip_forwarding_; }
  void set_chip_forwarding(bool on) { chip_forwarding_ = on; }
  // How a message between two chips uses several equal-cost paths when the run does not say
  // (`multipath=auto`): "single" (the one route), "stripe" (split over all of them in proportion to
  // their bandwidth, as NVLink sprays over NVSwitch planes) or "hash" (one of them, chosen per pair).
  const std::string& multipath_default() const { return multipath_default_; }
  void set_multipath_default(std::string policy) { multipath_default_ = std::move(policy); }

  // Imported topologies (file:PATH) keep the spec and parameters their file records, so that exporting
  // one again reproduces the file; nullopt for a topology built by a generator.
  const std::optional<TopologyOrigin>& origin() const { return origin_; }

  // The software stack (collectives/stack.hpp) a run on it uses unless it names one: its generator's, a
  // cluster's inner preset's, an imported file's own "stack" field (else its generator's).
  // "ideal" until something sets it.
  std::string default_stack() const { return default_stack_.empty() ? "ideal" : default_stack_; }
  bool has_default_stack() const { return !default_stack_.empty(); }
  void set_default_stack(std::string stack) { default_stack_ = std::move(stack); }
  // Multiplies every link's efficiency by `factor` (a protocol's payload fraction), before routes exist.
  void scale_efficiency(double factor);
  // Adds `latency` to every link of tier `tier` that has a chip at one end (a route between two scale-up
  // domains crosses two such links: each carries half a network step).
  void add_chip_link_latency(const std::string& tier, double latency);
  void set_origin(TopologyOrigin origin) { origin_ = std::move(origin); }

  // A part of the fabric (spec SPEC@CHIPS): keeps `ranks` (ascending, distinct, each below chip_count())
  // as the chips, rank r being the chip of rank ranks[r]; the other chips stay in the graph with their
  // links (they still forward where chips forward) but are no endpoints: their rank becomes -1. The spec
  // becomes `spec`.
  void keep_chips(const std::vector<int>& ranks, std::string spec);
  // The rank chip `rank` has in the whole fabric (itself, unless keep_chips renumbered the chips).
  int fabric_rank(int rank) const { return fabric_ranks_.empty() ? rank : fabric_ranks_.at(rank); }

  // Chips whose routes to every chip stand for all pairs where only route latencies and hop counts
  // matter (Routes::diameter, min_chip_latency): every chip is the image of one of them under a symmetry
  // of the fabric (a graph automorphism keeping links' latencies and tiers and switches' latencies).
  // Declared by the generators of symmetric fabrics; empty: none declared, every chip counts. keep_chips
  // forgets it.
  const std::vector<int>& route_sources() const { return route_sources_; }
  void set_route_sources(std::vector<int> ranks) { route_sources_ = std::move(ranks); }

  // Sum of delivered bandwidth of a chip's links, per direction: what it can inject at most.
  double injection_bandwidth(int rank) const;

 private:
  std::string spec_;
  ParamSet params_;
  std::vector<std::string> tiers_;
  Graph graph_;
  std::vector<Vertex> chips_;
  std::vector<int> route_sources_;  // set_route_sources; empty: every chip
  std::vector<int> fabric_ranks_;   // keep_chips: each chip's rank in the whole fabric; empty otherwise
  std::vector<Vertex> switches_;
  std::vector<Link> links_;
  bool chip_forwarding_ = true;
  std::string multipath_default_ = "single";
  std::optional<TopologyOrigin> origin_;
  std::string default_stack_;
};

}  // namespace ultrasim
