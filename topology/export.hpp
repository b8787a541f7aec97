// Views of a topology for `ultrasim topology`: a text summary, JSON (the project's interchange form),
// GraphViz DOT, and SimGrid platform XML (loads in SimGrid 3.32 unchanged; same routes as a run uses).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "topology/routing.hpp"

namespace ultrasim {

// One tier's links, and what a chip has on that tier: the sum of its links' rates per direction,
// smallest and largest over the chips.
struct TierStats {
  std::string tier;
  int links = 0;                                                   // graph links
  int lanes = 0;                                                   // physical links they bundle
  std::pair<double, double> chip_raw{0, 0}, chip_delivered{0, 0};  // B/s, {min, max} over chips
  std::pair<double, double> link_raw{0, 0}, link_delivered{0, 0};  // B/s, {min, max} over its links
};
// In the order of Topology::tiers().
std::vector<TierStats> tier_stats(const Topology& topology);

// Chips, switches, links and lanes per tier with per-chip raw and delivered bandwidth, diameter,
// injection bandwidth, bisection bandwidth (and how it was obtained), forwarding, multipath default,
// parameters with units and sources.
std::string topology_summary(const Topology& topology, const Routes& routes);
// The re-importable description (topology/README.md, file:PATH): the graph (topology_graph_json) plus
// "schema_version", "spec", "stack" (its default software stack), "chips", "switches", "parameters", and the
// summary's figures ("per_tier", "diameter_links", "injection_Bps", "injection_raw_Bps", "bisection_Bps",
// "bisection_method"). Keys are sorted; numbers are written so that they read back as the same doubles.
nlohmann::json topology_json(const Topology& topology, const Routes& routes);
// The graph alone: "tiers", "chip_forwarding", "multipath_default", "nodes", "links".
nlohmann::json topology_graph_json(const Topology& topology);
// GraphViz: racks and servers as clusters (cluster_rackR { cluster_serverS { ... } }), switches in the
// server or rack all their chips share, links coloured by tier (labelled on small graphs).
std::string topology_dot(const Topology& topology);
std::string topology_simgrid_xml(const Topology& topology, const Routes& routes);
// The estimated length of topology_simgrid_xml's text, before any of it is built: a route for every ordered
// pair of chips and for every chip-switch pair in both directions (and, under a multi-path policy, one per
// further path of a pair), each hop a link_ctn, at the mean route length, mean path-set size and mean name
// lengths of up to 8 source chips spread over the ranks. Unreachable pairs throw SimulationError as the
// export would.
double simgrid_xml_bytes(const Topology& topology, const Routes& routes);

}  // namespace ultrasim
