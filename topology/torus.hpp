// Wrap-around tori shared by the generic `torus` generator and the presets built on one (trn2,
// trn2-ultraserver, tpu-v5p): dimension parsing, the links, and the exact bisection.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topology/base/param_table.hpp"
#include "topology/topology.hpp"

namespace ultrasim {

// One dimension of a torus and the links along it.
struct TorusDimension {
  long size = 1;
  std::string tier;          // tier of the links along this dimension
  double raw_bandwidth = 0;  // per link, per direction
  double latency = 0;        // per link
  double efficiency = 1;     // payload fraction of raw_bandwidth
  int lanes = 1;             // physical links bundled into each graph link
  bool wrap = true;          // false: a line (size-1 links), as in a slice without wrap-around links
};

// Each dimension's links form a tier of their own, named `prefix` + x, y, z (then dim3, dim4, ...): since
// routing breaks ties towards lower tiers first, routes on a torus are dimension-ordered (all x hops,
// then y, then z), as torus routers do (Dally & Towles, 14.2: dimension-order routing). With one tier
// for every dimension, ties fell to the first path found and concentrated traffic: a tpu-v5p:4x4x4
// direct all-to-all took 45.3 ms instead of 8.95 ms.
std::string dimension_tier(const std::string& prefix, std::size_t dimension);

// One tier of links (a torus dimension's): raw bandwidth per direction, latency, payload efficiency.
struct LinkTier {
  double bandwidth = 0, latency = 0, efficiency = 1;
};
// Their declarations, in this order (each preset gives its own names, defaults and sources).
ParamTable<LinkTier> link_tier_table(ParamSpec bandwidth, ParamSpec latency, ParamSpec efficiency);
// The tiers of dims, in dimension order (what the Topology is declared with).
std::vector<std::string> torus_tiers(const std::vector<TorusDimension>& dims);

// Parses "AxBxC" into positive sizes. `name` and `example` go into the messages
// ("invalid tpu-v5p dimensions '4x0x4'; expected positive sizes such as 4x4x4"). Throws InputError,
// also when the product exceeds `max_chips`.
std::vector<long> parse_torus_dims(const std::string& name, const std::string& args,
                                   const std::string& example, long max_chips = 1 << 18);

// Links the chips 0 .. prod(size)-1, which must already exist, rank = x0 + s0 (x1 + s1 (x2 + ...)) (the
// first dimension varies fastest): along each dimension chip x links to x+1, and the last one back to
// the first where the dimension wraps. A dimension of size 2 has one link, of size 1 none.
void add_torus_links(Topology& t, const std::vector<TorusDimension>& dims);

// Exact bisection of such a torus, delivered B/s per direction: the cheapest cut across one dimension of
// even size d into two halves, which crosses prod/d links per ring, twice where the ring wraps
// (and d > 2): min over even d of (prod / d) x (wrap && d > 2 ? 2 : 1) x bandwidth_d (Dally & Towles,
// "Principles and Practices of Interconnection Networks", 3.3: a k-ary n-cube's bisection is 2k^(n-1)
// channels). nullopt when no dimension has an even size (no balanced cut across one dimension).
std::optional<double> torus_bisection(const std::vector<TorusDimension>& dims);

// The trn2 instance's 4x4 torus and its parameters (trn2_topology.cpp), shared with trn2-ultraserver.
std::vector<ParamSpec> trn2_instance_params();
std::vector<TorusDimension> trn2_instance_dims(const ParamSet& params);

}  // namespace ultrasim
