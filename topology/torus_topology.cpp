// torus:AxB[xC...] — a wrap-around torus of any number of dimensions; chips forward traffic.
// Rank = x0 + A * (x1 + B * (x2 + ...)): the first dimension varies fastest. Along each dimension a chip
// links to its +1 neighbour modulo the size; a dimension of size 2 has one link, of size 1 none.
//
//   torus:3x2     c0 - c1 - c2 -+      (each row wraps around; the 2-long column has one link)
//                 |    |    |   |
//                 c3 - c4 - c5 -+
//
// The helpers of torus.hpp (also used by the trn2 and tpu-v5p presets) live here.
#include <algorithm>
#include <sstream>

#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "topology/registry.hpp"
#include "topology/torus.hpp"

namespace ultrasim {

std::vector<long> parse_torus_dims(const std::string& name, const std::string& args,
                                   const std::string& example, long max_chips) {
  if (args.empty()) throw InputError("topology " + name + " needs dimensions, e.g. " + name + ":" + example);
  const std::string invalid =
      "invalid " + name + " dimensions '" + args + "'; expected positive sizes such as " + example;
  std::vector<long> dims;
  std::stringstream in(args);
  std::string part;
  while (std::getline(in, part, 'x')) {
    try {
      dims.push_back(parse_count(part));
    } catch (const InputError&) {
      throw InputError(invalid);
    }
  }
  if (args.back() == 'x' || dims.empty()) throw InputError(invalid);
  double total = 1;
  for (long d : dims) {
    total *= static_cast<double>(d);
    if (total > static_cast<double>(max_chips))
      throw InputError(name + " " + args + " has more than " + std::to_string(max_chips) + " chips");
  }
  check_topology_size(name + ":" + args, total, total * static_cast<double>(dims.size()));
  return dims;
}

std::string dimension_tier(const std::string& prefix, std::size_t dimension) {
  static const char* kNames[] = {"x", "y", "z"};
  return prefix + (dimension < 3 ? kNames[dimension] : "dim" + std::to_string(dimension));
}

ParamTable<LinkTier> link_tier_table(ParamSpec bandwidth, ParamSpec latency, ParamSpec efficiency) {
  return ParamTable<LinkTier>{}
      .add(std::move(bandwidth), &LinkTier::bandwidth)
      .add(std::move(latency), &LinkTier::latency)
      .add(std::move(efficiency), &LinkTier::efficiency);
}

std::vector<std::string> torus_tiers(const std::vector<TorusDimension>& dims) {
  std::vector<std::string> tiers;
  for (const auto& d : dims) tiers.push_back(d.tier);
  return tiers;
}

void add_torus_links(Topology& t, const std::vector<TorusDimension>& dims) {
  long total = 1;
  for (const auto& d : dims) total *= d.size;
  long stride = 1;
  for (const auto& d : dims) {
    // Chips x = 0 .. links-1 of each ring link to x+1 (mod size).
    long links_per_ring = d.size == 2 ? 1 : (d.size > 2 ? (d.wrap ? d.size : d.size - 1) : 0);
    for (long rank = 0; rank < total; ++rank) {
      long x = (rank / stride) % d.size;
      if (x >= links_per_ring) continue;
      long neighbour = rank + (((x + 1) % d.size) - x) * stride;
      t.add_link(t.chip(static_cast<int>(rank)), t.chip(static_cast<int>(neighbour)), d.tier, d.raw_bandwidth,
                 d.latency, d.efficiency, d.lanes);
    }
    stride *= d.size;
  }
}

std::optional<double> torus_bisection(const std::vector<TorusDimension>& dims) {
  long total = 1;
  for (const auto& d : dims) total *= d.size;
  std::optional<double> best;
  for (const auto& d : dims) {
    if (d.size % 2 != 0) continue;
    double crossings = static_cast<double>(total / d.size) * (d.wrap && d.size > 2 ? 2 : 1);
    double cut = crossings * d.raw_bandwidth * d.efficiency;
    if (!best || cut < *best) best = cut;
  }
  return best;
}

namespace {

std::vector<TorusDimension> uniform_dims(const std::vector<long>& sizes, const SimpleLinks& l) {
  std::vector<TorusDimension> dims;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    dims.push_back({sizes[i], dimension_tier("", i), l.bandwidth, l.latency, l.efficiency, 1, true});
  return dims;
}

}  // namespace

GeneratorEntry torus_generator() {
  GeneratorEntry entry{"torus", "torus:AxB[xC...]",
                       "wrap-around torus, any number of dimensions, chips forward", simple_link_params(),
                       [](const std::string& spec, const std::string& args, const ParamSet& params) {
                         std::vector<long> sizes = parse_torus_dims("torus", args, "4x4x4");
                         long total = 1;
                         for (long d : sizes) total *= d;
                         auto dims = uniform_dims(sizes, simple_link_table().read(params));
                         Topology t(spec, params, torus_tiers(dims));
                         for (long i = 0; i < total; ++i) t.add_chip();
                         add_torus_links(t, dims);
                         // Every dimension wraps: a translation maps chip 0 to any chip.
                         if (total > 0) t.set_route_sources({0});
                         return t;
                       }};
  entry.example = "torus:4x4";
  entry.bisection = [](const Topology& t) -> std::optional<double> {
    auto sizes = parse_torus_dims("torus", split_topology_spec(t.spec()).second, "4x4x4");
    return torus_bisection(uniform_dims(sizes, simple_link_table().read(t.params())));
  };
  return entry;
}

}  // namespace ultrasim
