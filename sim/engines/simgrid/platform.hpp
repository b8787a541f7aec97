// Builds the SimGrid platform of a topology (from its PlatformPlan, or from an exported XML file) and
// answers each route's latency. Latencies are kept here and zeroed on SimGrid's links (sim/DESIGN.md).
// Requires a configured s4u::Engine (see configure_engine) and must run before Engine::run().
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <simgrid/s4u.hpp>

#include "topology/platform_plan.hpp"

namespace ultrasim {

// Sets the network model for exact α-β agreement: CM02, no cross traffic, no TCP window, optim Full.
void configure_engine();

// Checks a --simgrid-cfg "name:value" before SimGrid sees it: only settings that change how SimGrid
// computes and not what (precisions, selective update, the optimisation modes, the actors' contexts) are
// accepted, each within its values or range; anything else (a model, a factor) would break the exactness
// the tests check, or abort, crash or hang SimGrid. Throws InputError naming the setting and what is
// accepted.
void check_simgrid_setting(const std::string& setting);

class Platform {
 public:
  // Creates hosts, links and routes of `plan` in a Full zone.
  static Platform build(const PlatformPlan& plan, const Topology& topology);
  // Loads an XML platform (as `ultrasim topology --format simgrid-xml` writes) and finds its hosts by
  // the topology's names. Throws InputError if a chip or switch host is missing.
  static Platform load(const std::string& xml_file, const Topology& topology);

  simgrid::s4u::Host* chip(int rank) const { return chips_.at(rank); }
  simgrid::s4u::Host* switch_host(int index) const { return switches_.at(index); }
  int switch_count() const { return static_cast<int>(switches_.size()); }
  // The chip's endpoint host number `index` (0: the chip host; then chip<rank>#1, #2, ...). Flows on
  // path k of a pair run from the source's chip host to the destination's endpoint endpoint_index(k).
  // Throws std::logic_error if missing.
  simgrid::s4u::Host* endpoint_host(int rank, int index) const;
  // The index among the chip's endpoints that path k arrives at: k, or 0 with hashed_routes.
  int endpoint_index(int path_index) const { return hashed_routes_ ? 0 : path_index; }
  // Endpoints of a chip, its own host included (1 + the planes chip<rank>#1, #2, ... the platform has).
  int endpoint_count(int rank) const { return static_cast<int>(endpoints_.at(rank).size()); }
  // Sum of the (recorded) latencies of the links on the route from `src` to `dst`, in s.
  // Kept for the next call unless `cache` is false (the Fabric keeps chip-to-chip ones itself).
  double route_latency(simgrid::s4u::Host* src, simgrid::s4u::Host* dst, bool cache = true);

 private:
  Platform(const Topology& topology) : topology_(&topology) {}
  void find_hosts();
  void zero_latencies();

  const Topology* topology_;
  std::vector<simgrid::s4u::Host*> chips_, switches_;
  bool hashed_routes_ = false;
  std::vector<std::vector<simgrid::s4u::Host*>> endpoints_;  // per rank: chip host, then chip<rank>#1, ...
  std::unordered_map<const simgrid::s4u::Link*, double> link_latency_;
  std::unordered_map<const simgrid::s4u::Host*, std::unordered_map<const simgrid::s4u::Host*, double>>
      route_latency_;
};

}  // namespace ultrasim
