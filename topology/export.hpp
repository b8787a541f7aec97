// Views of a topology for `ultrasim topology`: a text summary, JSON (the project's interchange form),
// GraphViz DOT, and SimGrid platform XML (loads in SimGrid 3.32 unchanged; same routes as a run uses).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "topology/routing.hpp"

namespace ultrasim {

// chips, switches, links, tiers, diameter, injection bandwidth, parameters with units and sources.
std::string topology_summary(const Topology& topology, const Routes& routes);
// {"spec", "chips", "switches": [...], "nodes": [...], "links": [...], "parameters": {...}}.
nlohmann::json topology_json(const Topology& topology);
std::string topology_dot(const Topology& topology);
std::string topology_simgrid_xml(const Topology& topology, const Routes& routes);

}  // namespace ultrasim
