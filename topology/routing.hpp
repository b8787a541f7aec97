// Deterministic routing over a Topology. A route minimises, in this order: total latency (links plus
// the switches crossed), hop count, then the sequence of link tiers compared element by element (ties go
// to the lower tier first, e.g. forward inside the server before crossing racks). Chips relay traffic
// only when the topology says they forward (Topology::chip_forwarding); switches always do.
//
// Multi-path: the routes of a pair that tie with its route on that whole key (equal latency, hops and
// tier sequence) form its path set, the route first. A message between two chips takes the paths its
// policy says (the run parameter `multipath`): one route (single), all of them with bytes in
// proportion to their bottleneck bandwidth (stripe), or one chosen by a hash of the pair (hash).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "topology/base/param_table.hpp"
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

enum class Multipath { kSingle, kStripe, kHash };

// The policy in effect on a topology: its `multipath` parameter where declared (`auto`, or undeclared:
// Topology::multipath_default()). Throws InputError on an unknown word.
Multipath multipath_policy(const Topology& topology);
const char* multipath_name(Multipath policy);
// The policies' names, in the enum's order: single, stripe, hash (the `multipath` parameter adds auto).
const std::vector<std::string>& multipath_names();

// The paths of `max_paths` when the topology does not declare it.
constexpr int kDefaultMaxPaths = 64;

// The routing parameters a run declares (a bare topology does not: then multipath is auto and max_paths
// kDefaultMaxPaths). routing_table() declares both; a job's parameters include them
// (workloads/collective/collective_job.hpp).
struct RoutingParams {
  std::string multipath = "auto";
  int max_paths = kDefaultMaxPaths;
};
const ParamTable<RoutingParams>& routing_table();

// One path a message takes: its index in the pair's path set (0 = the route) and its share of the bytes.
struct PathShare {
  int index = 0;
  Path path;
  double weight = 1;  // fraction of the message's bytes, in proportion to the path's bandwidth
};

// `bytes` cut into integer parts in proportion to `weights` (largest remainders, ties to the earlier
// part), summing exactly to `bytes`.
std::vector<std::uint64_t> split_bytes(std::uint64_t bytes, const std::vector<double>& weights);

// The path index `hash` picks among `count` for the ordered pair (a, b): splitmix64 of (a << 32 | b)
// modulo count. Independent of --seed: like ECMP hashing of a header, a property of the pair.
int hashed_path(int a, int b, int count);

class Routes {
 public:
  // The policy and the cap on a path set come from the topology's parameters (`multipath`,
  // `max_paths`) where declared. Links marked in `down` (indexed like Topology::links(); empty: none)
  // are avoided as if absent: the routes around failed elements (sim/machine/faults.hpp).
  explicit Routes(const Topology& topology, std::vector<char> down = {});
  ~Routes();

  // The route between two vertices; nullopt when `to` cannot be reached from `from`.
  std::optional<Path> find(Vertex from, Vertex to) const;
  // Whether find(from, to) has a route, without building it.
  bool reachable(Vertex from, Vertex to) const { return tree_to(from, to).reached[to]; }
  // The route between two chips; throws SimulationError naming both when unreachable.
  Path between(int src_rank, int dst_rank) const;

  // Every route from `from` to `to` that ties with find(from, to) on the whole routing key, as distinct
  // vertex sequences (parallel links between two vertices are one hop, taken as find does), the route
  // first, then in a fixed order; at most max_paths(). Empty when unreachable.
  std::vector<Path> equal_paths(Vertex from, Vertex to) const;
  // The paths a message from chip a to chip b takes under the policy, with their shares (cached).
  // Throws SimulationError when unreachable.
  const std::vector<PathShare>& message_paths(int src_rank, int dst_rank) const;
  // between(a, b).latency without building the path (cached with message_paths). Throws like between.
  double route_latency(int src_rank, int dst_rank) const;
  // A message of `bytes` cut over message_paths(a, b) as the fabric sends it: one part per path (split_bytes
  // of the shares), summing to `bytes`. The simulator and the closed forms both cut with this.
  std::vector<std::uint64_t> message_parts(int src_rank, int dst_rank, std::uint64_t bytes) const;
  // The flows a message of `bytes` from a to b is sent as, in both engines: calls f(share, part) for
  // every path message_parts gives bytes, or once with 0 bytes on the first path if none gets any (an
  // empty message is still one flow, delivered after its path's latency).
  template <class F>
  void for_each_flow(int src_rank, int dst_rank, std::uint64_t bytes, F&& f) const {
    const auto& shares = message_paths(src_rank, dst_rank);
    if (shares.size() == 1) return f(shares.front(), bytes);
    const std::vector<std::uint64_t> parts = message_parts(src_rank, dst_rank, bytes);
    bool any = false;
    for (std::size_t k = 0; k < shares.size(); ++k)
      if (parts[k] > 0) f(shares[k], parts[k]), any = true;
    if (!any) f(shares.front(), std::uint64_t{0});
  }
  // The rate of one message from a to b alone on the fabric under the policy: n / bytes-per-second
  // of its busiest link direction. Single or hash: the bottleneck of its one path; stripe: the sum of
  // the paths' bandwidths where they share no link.
  double message_bandwidth(int src_rank, int dst_rank) const;
  Multipath policy() const { return policy_; }
  int max_paths() const { return max_paths_; }

  // Smallest route latency over all ordered pairs of distinct chips (0 for one chip).
  double min_chip_latency() const;
  // Largest hop count over all chip pairs (the diameter in links); throws if some pair is unreachable.
  int diameter() const;
  // The chips whose routes to every chip stand for all pairs in the two above: the topology's declared
  // route sources (Topology::route_sources) when no link is down, else every chip. Latencies and hop
  // counts of routes are kept by the fabric's symmetries, whichever tied route is chosen.
  std::vector<int> source_chips() const;

  const Topology& topology() const { return topology_; }
  bool link_down(int link) const { return !down_.empty() && down_[link]; }

 private:
  struct Tree {
    std::vector<int> parent_link;  // -1 at the root or where unreachable
    std::vector<Vertex> parent;
    std::vector<char> reached;
    std::vector<double> latency;  // route latency to each vertex
    std::vector<int> hops;
    // The predecessors (vertex, link) other than the parent through which a route ties with the best
    // one, for the vertices that have any (most have none: kept sparse).
    std::unordered_map<Vertex, std::vector<std::pair<Vertex, int>>> ties;
  };
  struct Search;
  // The whole tree from `from`, built once and kept.
  const Tree& tree(Vertex from) const;
  // A tree from `from` that is exact for `to` and the vertices its routes and tied paths cross: the
  // whole tree if kept, else a search stopped once `to` is settled, in scratch storage valid until the
  // next call. A source searched kTargetedSearches times gets its whole tree.
  const Tree& tree_to(Vertex from, Vertex to) const;
  // The label-setting search from `from` into search_: the whole tree (kWhole), stopped once `to` is
  // settled (kAtTarget), or stopped once no chip can come nearer than the nearest labelled one
  // (kNearestChip); returns, for kNearestChip, that chip's route latency (infinite if none).
  enum class Stop { kWhole, kAtTarget, kNearestChip };
  double search(Vertex from, Stop stop, Vertex to = 0) const;
  // The end of search(): settles what relays nothing (the target, or every vertex of a whole tree), or
  // returns the nearest chip's latency, from search_'s final labels.
  double settle(Vertex from, Stop stop, Vertex to) const;

  const Topology& topology_;
  std::vector<char> down_;  // per link: avoided (failed); empty: every link is up
  Multipath policy_ = Multipath::kSingle;
  int max_paths_ = kDefaultMaxPaths;
  mutable std::vector<std::unique_ptr<Tree>> trees_;  // whole trees, per vertex, where built
  mutable std::vector<std::size_t> searched_;         // per vertex: vertices its targeted searches touched
  mutable std::unique_ptr<Search> search_;            // the scratch state of the last search
  // The cached message paths of the pairs a source chip was asked for: a few pairs listed (near-linear
  // memory where a run uses few pairs per chip), or, past kListedPairs, a slot per destination.
  struct Destinations {
    std::vector<std::pair<int, std::unique_ptr<std::vector<PathShare>>>> listed;
    std::vector<std::unique_ptr<std::vector<PathShare>>> indexed;  // empty until the list is outgrown
  };
  static constexpr std::size_t kListedPairs = 16;
  std::unique_ptr<std::vector<PathShare>>& message_slot(int src_rank, int dst_rank) const;
  mutable std::vector<Destinations> messages_;  // per source chip
};

}  // namespace ultrasim
