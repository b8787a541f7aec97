#include "sim/machine/memory_guard.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {
namespace {

// Bytes per item, measured on switch:1024 and torus:32x32 (RelWithDebInfo, glibc malloc) and rounded up.
constexpr double kProcessBytes = 100.0 * (1 << 20);  // SimGrid, the binary, buffers
constexpr double kPerVertexBytes = 1024;             // graph node, name, platform host
constexpr double kPerLinkBytes = 1024;               // graph edge, name, two SimGrid links
constexpr double kPerTreeEntryBytes = 48;            // one vertex of one chip's routing tree
constexpr double kPerPairRouteBytes = 400;           // a cached route (path, hops, vertices)

std::string count(double n) {
  return std::to_string(static_cast<long long>(n));
}

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1 << 30));
  return text;
}

// "MemAvailable:   23816772 kB" -> bytes; nullopt when absent.
std::optional<double> meminfo_available() {
  std::ifstream in("/proc/meminfo");
  for (std::string key; in >> key;) {
    double value = 0;
    std::string unit;
    in >> value >> unit;
    if (key == "MemAvailable:") return value * 1024;
  }
  return std::nullopt;
}

// A cgroup v2 limit: memory.max - memory.current, where memory.max is a number.
std::optional<double> cgroup_available() {
  std::ifstream max_file("/sys/fs/cgroup/memory.max"), current_file("/sys/fs/cgroup/memory.current");
  std::string max_text;
  double current = 0;
  if (!(max_file >> max_text) || max_text == "max" || !(current_file >> current)) return std::nullopt;
  char* end = nullptr;
  double max = std::strtod(max_text.c_str(), &end);
  if (*end != '\0') return std::nullopt;
  return std::max(0.0, max - current);
}

}  // namespace

namespace {

// The graph, and a whole routing tree from each of `trees` chips.
MemoryEstimate graph_memory(const Topology& topology, double trees) {
  const double p = topology.chip_count();
  const double vertices = p + static_cast<double>(topology.switches().size());
  const double links = static_cast<double>(topology.links().size());
  MemoryEstimate e;
  e.bytes = kProcessBytes + vertices * kPerVertexBytes + links * kPerLinkBytes +
            (trees + 1) * vertices * kPerTreeEntryBytes;  // + 1: the targeted searches' scratch
  e.basis = count(p) + " chips, " + count(vertices - p) + " switches, " + count(links) + " links; " +
            (trees == p ? "a routing tree per chip" : "routing trees from " + count(trees) + " chips");
  return e;
}

// The chips whose whole trees the diameter and the bound build (Routes::source_chips).
double source_count(const Topology& topology) {
  return topology.route_sources().empty() ? topology.chip_count()
                                          : static_cast<double>(topology.route_sources().size());
}

}  // namespace

MemoryEstimate topology_memory(const Topology& topology) {
  return graph_memory(topology, source_count(topology));
}

MemoryEstimate export_memory(const Topology& topology, double text_bytes, const std::string& format) {
  constexpr double kTextCopies = 2.5;
  MemoryEstimate e = topology_memory(topology);
  e.bytes += kTextCopies * text_bytes;
  e.basis += ", " + gib(text_bytes) + " of " + format + " text";
  return e;
}

MemoryEstimate run_memory(const Topology& topology, double in_flight_per_chip, EngineFlowCost cost) {
  const double p = topology.chip_count();
  // Routes are built for the pairs a run sends between: every pair where a chip posts to every peer (a
  // whole tree from every chip then), a few per chip otherwise; SimGrid's platform declares them all.
  const bool every_pair = cost.routes_every_pair || in_flight_per_chip >= p - 1;
  const double pairs = every_pair ? p * (p - 1) : p * std::min(p - 1, in_flight_per_chip);
  MemoryEstimate e = graph_memory(topology, every_pair ? p : source_count(topology));
  const double flows = p * in_flight_per_chip;
  e.bytes += pairs * kPerPairRouteBytes + flows * cost.bytes_per_flow;
  e.basis += ", routes of " + count(pairs) + " chip pairs, " + count(flows) + " flows in flight x " +
             count(cost.bytes_per_flow) + " B in " + cost.engine;
  return e;
}

bool any_posts_to_all(const std::vector<const AlgorithmEntry*>& algorithms) {
  return std::any_of(algorithms.begin(), algorithms.end(),
                     [](const AlgorithmEntry* e) { return e->posts_to_all; });
}

double flows_in_flight_per_chip(bool posts_to_all, int p) {
  constexpr double kNarrow = 4;  // a ring or tree step: a send and a receive, double-buffered
  return posts_to_all ? std::max<double>(kNarrow, p - 1) : kNarrow;
}

std::optional<double> memory_available(std::string* source) {
  if (const char* limit = std::getenv("ULTRASIM_MEMORY_LIMIT"); limit && *limit) {
    const std::string text = limit;
    if (text == "off" || text == "none") return std::nullopt;
    try {
      double bytes = static_cast<double>(parse_bytes(text));
      if (source) *source = "ULTRASIM_MEMORY_LIMIT=" + text;
      return bytes;
    } catch (const InputError&) {
      throw InputError("invalid ULTRASIM_MEMORY_LIMIT '" + text + "'; expected a size such as 64GiB, or off");
    }
  }
  std::optional<double> available = meminfo_available();
  if (source) *source = "MemAvailable in /proc/meminfo";
  if (auto cgroup = cgroup_available(); cgroup && (!available || *cgroup < *available)) {
    available = cgroup;
    if (source) *source = "the cgroup's memory.max";
  }
  return available;
}

void check_memory(const MemoryEstimate& estimate, const std::string& what) {
  std::string source;
  const std::optional<double> available = memory_available(&source);
  if (!available || estimate.bytes <= *available) return;
  throw InputError(what + " needs an estimated " + gib(estimate.bytes) + " of memory (" + estimate.basis +
                   ") but " + gib(*available) + " is available (" + source +
                   "); use a smaller configuration, or set ULTRASIM_MEMORY_LIMIT=SIZE or off to override");
}

}  // namespace ultrasim
