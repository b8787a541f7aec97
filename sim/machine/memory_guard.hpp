// The memory guard: a configuration whose estimated peak memory exceeds what the machine has is refused
// up front as bad input (exit status 2, a message giving both figures) instead of being killed by the
// kernel's OOM killer an hour into a sweep. The estimate is deliberately coarse (sim/README.md, "Errors
// and limits"); it errs on the high side by up to about 2x.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectives/algorithm.hpp"
#include "topology/topology.hpp"

namespace ultrasim {

struct MemoryEstimate {
  double bytes = 0;
  std::string basis;  // what it counts, for the message ("144 chips, 288 links, ...")
};

// `ultrasim topology`: the graph and a routing tree from every route source (Topology::route_sources:
// the diameter; every chip where none are declared).
MemoryEstimate topology_memory(const Topology& topology);
// `ultrasim topology --format F` writing `text_bytes` of export (F: its name): topology_memory() and the
// text, built whole before it is written and copied once, with the route plan beside it: 2.5 x its length
// (measured: torus:16x16x8's 2.32 GB of SimGrid XML peaked at 5.44 GB).
MemoryEstimate export_memory(const Topology& topology, double text_bytes, const std::string& format);

// What one flow in flight costs the engine that carries it, measured as (peak of a direct all-to-all -
// peak of a pairwise one) / (flows in flight) on switch:576 (331,200 flows; sim/DESIGN.md, "Memory"),
// rounded up: SimGrid 1,630 B (an activity, its action, our record), the flow engine 700 B (its send,
// fluid flow and heap entry). The contention-free engine is counted at the flow engine's figure
// (assumption: its records are no larger; `auto` may hand its run on to the flow engine). build_machine
// checks at the leanest figure, whatever engine will run; simulate() checks again before SimGrid runs.
struct EngineFlowCost {
  const char* engine;
  double bytes_per_flow;
  bool routes_every_pair = false;  // its platform declares the route of every chip pair up front
};
inline constexpr EngineFlowCost kSimGridFlowCost{"SimGrid", 2048, true};
inline constexpr EngineFlowCost kFlowEngineFlowCost{"the flow engine, the leanest", 768};

// `ultrasim run`: the graph, the cached routes of the chip pairs it sends between (every pair, with a
// whole tree from every chip, where a chip posts to all its peers or the engine is SimGrid; else
// min(p - 1, in_flight_per_chip) per chip, with trees from the route sources alone) and the flows in
// flight at once, at `cost` each.
// `in_flight_per_chip`: what one chip has outstanding at worst (see flows_in_flight_per_chip).
MemoryEstimate run_memory(const Topology& topology, double in_flight_per_chip, EngineFlowCost cost);

// Messages one chip has in flight at worst: p - 1 if it posts to every peer at once (`posts_to_all`), a
// few otherwise (rings, trees, pairwise and recursive exchanges).
double flows_in_flight_per_chip(bool posts_to_all, int p);
// Whether any of `algorithms` posts to every peer at once (AlgorithmEntry::posts_to_all).
bool any_posts_to_all(const std::vector<const AlgorithmEntry*>& algorithms);

// The memory a run may use: ULTRASIM_MEMORY_LIMIT (a size such as 64GiB, or "off": no check) if set,
// else MemAvailable from /proc/meminfo, lowered to the cgroup's memory.max - memory.current where one
// is set; nullopt when off or unknown. Throws InputError on a malformed ULTRASIM_MEMORY_LIMIT.
std::optional<double> memory_available(std::string* source = nullptr);

// Throws InputError "<what> needs an estimated X GiB of memory (...) but Y GiB is available (...)" when
// the estimate exceeds memory_available().
void check_memory(const MemoryEstimate& estimate, const std::string& what);

}  // namespace ultrasim
