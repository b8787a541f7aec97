// Deterministic routing over a Topology. A route minimises, in this order: total latency (links plus
// the switches crossed), hop count, then the sequence of link tiers compared element by element (ties go
// to the lower tier first, e.g. forward inside the server before crossing racks). Chips relay traffic
// only when the topology says they forward (Topology::chip_forwarding); switches always do.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "topology/topology.hpp"

namespace ultrasim {

struct Hop {
  int link = 0;    // index into Topology::links()
  bool up = true;  // traversed from Link::a to Link::b
};

struct Path {
  std::vector<Hop> hops;
  std::vector<Vertex> vertices;  // from source to destination, hops.size() + 1 of them
  double latency = 0;            // sum of link latencies and of the latencies of switches crossed, s
  double bandwidth = 0;          // bottleneck delivered bandwidth, B/s (infinite for an empty path)
};

// Builds the path through the given vertices, each consecutive pair joined by a link (the first one
// if several). Throws InputError if two consecutive vertices are not adjacent.
Path path_through(const Topology& topology, const std::vector<Vertex>& vertices);

class Routes {
 public:
  explicit Routes(const Topology& topology);

  // The route between two vertices; nullopt when `to` cannot be reached from `from`.
  std::optional<Path> find(Vertex from, Vertex to) const;
  // The route between two chips; throws SimulationError naming both when unreachable.
  Path between(int src_rank, int dst_rank) const;

  // Smallest route latency over all ordered pairs of distinct chips (0 for one chip).
  double min_chip_latency() const;
  // Largest hop count over all chip pairs (the diameter in links); throws if some pair is unreachable.
  int diameter() const;

  const Topology& topology() const { return topology_; }

 private:
  struct Tree {
    std::vector<int> parent_link;  // -1 at the root or where unreachable
    std::vector<Vertex> parent;
    std::vector<char> reached;
    std::vector<double> latency;  // route latency to each vertex
    std::vector<int> hops;
  };
  Tree& tree(Vertex from) const;

  const Topology& topology_;
  mutable std::vector<std::unique_ptr<Tree>> trees_;
};

}  // namespace ultrasim
