// torus:AxB[xC...] — a wrap-around torus of any number of dimensions; chips forward traffic.
// Rank = x0 + A * (x1 + B * (x2 + ...)): the first dimension varies fastest. Along each dimension a chip
// links to its +1 neighbour modulo the size; a dimension of size 2 has one link, of size 1 none.
//
//   torus:3x2     c0 - c1 - c2 -+      (each row wraps around; the 2-long column has one link)
//                 |    |    |   |
//                 c3 - c4 - c5 -+
#include <algorithm>
#include <sstream>

#include "topology/errors.hpp"
#include "topology/registry.hpp"
#include "topology/units.hpp"

namespace ultrasim {
namespace {

std::vector<long> parse_dims(const std::string& args) {
  if (args.empty()) throw InputError("topology torus needs dimensions, e.g. torus:4x4x4");
  std::vector<long> dims;
  std::stringstream in(args);
  std::string part;
  while (std::getline(in, part, 'x')) {
    try {
      dims.push_back(parse_count(part));
    } catch (const InputError&) {
      throw InputError("invalid torus dimensions '" + args + "'; expected positive sizes such as 4x4x4");
    }
  }
  if (args.back() == 'x' || dims.empty())
    throw InputError("invalid torus dimensions '" + args + "'; expected positive sizes such as 4x4x4");
  long total = 1;
  for (long d : dims) {
    total *= d;
    if (total > 1 << 20) throw InputError("torus " + args + " has more than 1048576 chips");
  }
  return dims;
}

}  // namespace

GeneratorEntry torus_generator() {
  GeneratorEntry entry{
      "torus", "torus:AxB[xC...]", "wrap-around torus, any number of dimensions, chips forward",
      simple_link_params(), [](const std::string& spec, const std::string& args, const ParamSet& params) {
        std::vector<long> dims = parse_dims(args);
        long total = 1;
        for (long d : dims) total *= d;
        Topology t(spec, params, {"link"});
        for (long i = 0; i < total; ++i) t.add_chip();
        long stride = 1;
        for (long size : dims) {
          long links_per_ring = size == 2 ? 1 : (size > 2 ? size : 0);
          for (long rank = 0; rank < total; ++rank) {
            long x = (rank / stride) % size;
            if (x >= links_per_ring) continue;
            long neighbour = rank + (((x + 1) % size) - x) * stride;
            t.add_link(t.chip(static_cast<int>(rank)), t.chip(static_cast<int>(neighbour)), "link",
                       params.number("link_bandwidth"), params.number("link_latency"));
          }
          stride *= size;
        }
        return t;
      }};
  entry.example = "torus:4x4";
  // Bisection: cut across the longest dimension, of even size k: every ring along it crosses the cut
  // twice (once with k = 2, which has one link), and there are N/k such rings, so 2N/k links (N/2 for
  // k = 2) x link bandwidth per direction. For k-ary n-cubes this is the bisection (Dally & Towles,
  // "Principles and Practices of Interconnection Networks", 2004, sec. 3.3: 4k^(n-1) unidirectional
  // channels); for mixed sizes it is the best cut across one dimension, which a brute force over every
  // balanced split confirmed on 4x3, 6x3, 4x2x3, 8x2, 2x2x4. With an odd longest dimension no such cut
  // halves the chips: no formula (the summary computes a cut).
  entry.bisection = [](const Topology& t) -> std::optional<double> {
    std::vector<long> dims = parse_dims(split_topology_spec(t.spec()).second);
    long k = *std::max_element(dims.begin(), dims.end());
    if (k % 2 != 0) return std::nullopt;
    long cut = (k == 2 ? 1 : 2) * (t.chip_count() / k);
    return cut * t.links().front().bandwidth();
  };
  return entry;
}

}  // namespace ultrasim
