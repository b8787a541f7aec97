// Small views of a built topology that the topology tests share: building a spec, counting links of a
// tier, naming a route's vertices.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "topology/registry.hpp"
#include "topology/routing.hpp"

namespace ultrasim::test {

// Builds `spec` with the generator's parameters and the given overrides, as the CLI does.
inline Topology build(const std::string& spec, std::vector<std::pair<std::string, std::string>> sets = {}) {
  return make_topology(spec, {}, sets);
}

inline int degree(const Topology& t, Vertex v) {
  return static_cast<int>(boost::out_degree(v, t.graph()));
}

// Graph links of the tier (not lanes).
inline int count_tier(const Topology& t, const std::string& tier) {
  int n = 0;
  for (const Link& l : t.links()) n += l.tier == tier;
  return n;
}

// Names of the vertices a path visits, source first.
inline std::vector<std::string> names(const Topology& t, const Path& path) {
  std::vector<std::string> out;
  for (Vertex v : path.vertices) out.push_back(t.node(v).name);
  return out;
}

}  // namespace ultrasim::test
