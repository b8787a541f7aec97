// tpu-v5p:AxBxC — a Google Cloud TPU v5p slice: A x B x C chips in a 3D torus, 6 ICI links per chip
// (one to each neighbour), chips forward. Rank = x + A (y + B z).
// Source: ../shared/reference/hardware.md [Google] and Google's v5p page (cloud.google.com/tpu/docs/v5p):
// 1,200 GB/s bidirectional ICI per chip, i.e. ~100 GB/s per direction per link over 6 links [INF];
// "all 4x4x4 and larger slices (one cube) have full 3D torus connectivity; slices smaller than a full cube
// ... don't have wrap-around links"; a host (VM) drives 4 chips, a 2x2x1 slice being one host; a cube
// of 4x4x4 chips is a rack (v5p-128 "1 full cube/rack").
//
//   server = the 2x2x1 host block (x/2, y/2, z) when A and B are even, else none;
//   rack   = the 4x4x4 cube when A, B and C are multiples of 4, else none.
#include "topology/base/errors.hpp"
#include "topology/registry.hpp"
#include "topology/torus.hpp"

namespace ultrasim {
namespace {

constexpr long kPodChips = 8960;  // Google: 8960 chips in a v5p pod

// tpu-v5p's parameters, typed; tpu_v5p_table() declares each with its default and source.
struct TpuV5pParams {
  double ici_bandwidth = 0, ici_latency = 0, ici_efficiency = 0;
  std::string ici_wraparound;  // auto, on or off
};

const ParamTable<TpuV5pParams>& tpu_v5p_table() {
  using P = TpuV5pParams;
  static const ParamTable<P> table =
      ParamTable<P>{}
          .add({"ici_bandwidth", "100GBps", Unit::kRate, "raw bandwidth of one ICI link, per direction",
                "hardware.md [Google]: 1,200 GB/s bidirectional per chip over 6 links; per link [INF]"},
               &P::ici_bandwidth)
          .add({"ici_latency", "1us", Unit::kTime, "latency of one ICI link (one hop)",
                "assumption: ASTRA-sim's TPU validation uses 1 us per ICI link (astra-sim docs, TPU-v3)"},
               &P::ici_latency)
          .add({"ici_efficiency", "0.9", Unit::kRatio, "payload fraction of the ICI raw rate",
                "assumption: ICI framing is not published; 0.9 lies in hardware.md's 80-95% delivered range"},
               &P::ici_efficiency)
          .add({"ici_wraparound",
                "auto",
                Unit::kChoice,
                "wrap-around links: auto = only when every dimension is a multiple of 4 (whole cubes), on, "
                "off",
                "Google v5p docs: slices of a full cube or more are tori; smaller slices have no wrap-around "
                "links",
                {"auto", "on", "off"}},
               &P::ici_wraparound);
  return table;
}

std::vector<TorusDimension> v5p_dims(const std::string& args, const TpuV5pParams& p) {
  std::vector<long> sizes = parse_torus_dims("tpu-v5p", args, "4x4x4", kPodChips);
  if (sizes.size() != 3)
    throw InputError("invalid tpu-v5p dimensions '" + args + "'; expected three sizes AxBxC such as 4x4x4");
  const std::string& mode = p.ici_wraparound;
  bool full_cubes = sizes[0] % 4 == 0 && sizes[1] % 4 == 0 && sizes[2] % 4 == 0;
  bool wrap = mode == "on" || (mode == "auto" && full_cubes);
  std::vector<TorusDimension> dims;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    dims.push_back(
        {sizes[i], dimension_tier("ici_", i), p.ici_bandwidth, p.ici_latency, p.ici_efficiency, 1, wrap});
  return dims;
}

}  // namespace

GeneratorEntry tpu_v5p_generator() {
  GeneratorEntry entry{"tpu-v5p", "tpu-v5p:AxBxC",
                       "Google TPU v5p slice: AxBxC 3D torus (wrap-around from 4x4x4), chips forward",
                       tpu_v5p_table().specs(),
                       [](const std::string& spec, const std::string& args, const ParamSet& p) {
                         auto dims = v5p_dims(args, tpu_v5p_table().read(p));
                         const long a = dims[0].size, b = dims[1].size, c = dims[2].size;
                         const bool hosts = a % 2 == 0 && b % 2 == 0;
                         const bool cubes = a % 4 == 0 && b % 4 == 0 && c % 4 == 0;
                         Topology t(spec, p, torus_tiers(dims));
                         for (long z = 0; z < c; ++z)
                           for (long y = 0; y < b; ++y)
                             for (long x = 0; x < a; ++x) {
                               long server = hosts ? x / 2 + a / 2 * (y / 2 + b / 2 * z) : -1;
                               long rack = cubes ? x / 4 + a / 4 * (y / 4 + b / 4 * (z / 4)) : -1;
                               t.add_chip(static_cast<int>(server), static_cast<int>(rack));
                             }
                         add_torus_links(t, dims);
                         return t;
                       }};
  entry.example = "tpu-v5p:4x4x4";
  entry.bisection = [](const Topology& t) {
    return torus_bisection(v5p_dims(split_topology_spec(t.spec()).second, tpu_v5p_table().read(t.params())));
  };
  return entry;
}

}  // namespace ultrasim
