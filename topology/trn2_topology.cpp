// trn2 — an AWS trn2.48xlarge instance: 16 Trainium2 chips in a 4x4 2D torus; chips forward.
// Source: ../shared/reference/hardware.md [AWS] and img/trn2-topology.png.
//
//   chip0  - chip1  - chip2  - chip3  -+     rank = x + 4y; every row and every column is a ring
//     |        |        |        |     |     (the figure's wrap-around links), 4 NeuronLink-v3 links
//   chip4  - chip5  - chip6  - chip7  -+     per chip of neuronlink_bandwidth each
//     ...                                    (4 x 256 = 1,024 GB/s per chip per direction)
//   chip12 - chip13 - chip14 - chip15 -+
//     +--------+--------+--------+ (wrap)
#include "topology/base/errors.hpp"
#include "topology/registry.hpp"
#include "topology/torus.hpp"

namespace ultrasim {

constexpr long kTrn2Side = 4;  // 4x4 [AWS]

namespace {

// A trn2 instance's NeuronLink links, declared with their defaults and sources.
const ParamTable<LinkTier>& trn2_instance_table() {
  static const ParamTable<LinkTier> table = link_tier_table(
      {"neuronlink_bandwidth", "256GBps", Unit::kRate,
       "raw bandwidth of each torus link between neighbours in an instance, per direction",
       "hardware.md [AWS]: 1,024 GB/s per chip over 4 neighbours; per link [INF]"},
      {"neuronlink_latency", "1us", Unit::kTime, "latency of a neighbour link (one hop)",
       "hardware.md [AWS, Trn2]: NeuronLink ring hops cost ~1-2 us each"},
      {"neuronlink_efficiency", "0.9", Unit::kRatio, "payload fraction of the NeuronLink-v3 raw rate",
       "assumption: NeuronLink-v3 framing is not published; 0.9 lies in hardware.md's 80-95% "
       "delivered "
       "range"});
  return table;
}

}  // namespace

std::vector<ParamSpec> trn2_instance_params() {
  return trn2_instance_table().specs();
}

std::vector<TorusDimension> trn2_instance_dims(const ParamSet& params) {
  const LinkTier p = trn2_instance_table().read(params);
  TorusDimension x{kTrn2Side, dimension_tier("neuronlink_", 0), p.bandwidth, p.latency, p.efficiency, 1,
                   true};
  TorusDimension y = x;
  y.tier = dimension_tier("neuronlink_", 1);
  return {x, y};
}

GeneratorEntry trn2_generator() {
  GeneratorEntry entry{
      "trn2", "trn2", "AWS trn2.48xlarge: 16 Trainium2 chips in a 4x4 2D torus, chips forward",
      trn2_instance_params(), [](const std::string& spec, const std::string& args, const ParamSet& p) {
        if (!args.empty()) throw InputError("topology trn2 takes no arguments; got 'trn2:" + args + "'");
        auto dims = trn2_instance_dims(p);
        Topology t(spec, p, torus_tiers(dims));
        for (long i = 0; i < kTrn2Side * kTrn2Side; ++i) t.add_chip(0);
        add_torus_links(t, dims);
        return t;
      }};
  entry.bisection = [](const Topology& t) { return torus_bisection(trn2_instance_dims(t.params())); };
  entry.stack = "neuron";  // collectives/stacks/neuron.json
  return entry;
}

}  // namespace ultrasim
