// trn2-ultraserver — the AWS Trn2 UltraServer: 4 trn2 instances = 64 chips, a 4x4x4 torus whose third
// dimension is the inter-instance ring; chips forward. Server = instance.
// Source: ../shared/reference/hardware.md [AWS] and img/trn2-us-topology.png.
//
//   instance z (chips 16z .. 16z+15): the trn2 4x4 torus, rank = x + 4y + 16z
//   chip (x, y, z) <-- z_ring link --> chip (x, y, z+1 mod 4): same-coordinate chips of the 4 instances
//   form a ring (2 z_ring links per chip of z_ring_bandwidth: 2 x 128 = 256 GB/s per chip)
#include "topology/base/errors.hpp"
#include "topology/registry.hpp"
#include "topology/torus.hpp"

namespace ultrasim {

constexpr long kTrn2Instances = 4;  // [AWS]

namespace {

// The inter-instance ring's links (the instance's own are trn2's, trn2_instance_params), declared with
// their defaults and sources.
const ParamTable<LinkTier>& z_ring_table() {
  static const ParamTable<LinkTier> table = link_tier_table(
      {"z_ring_bandwidth", "128GBps", Unit::kRate,
       "raw bandwidth of each inter-instance ring link, per direction",
       "hardware.md [AWS]: 256 GB/s per chip between instances; per link (2 per chip) [INF]"},
      {"z_ring_latency", "1us", Unit::kTime, "latency of an inter-instance ring link",
       "assumption: as a NeuronLink hop (hardware.md [AWS, Trn2]: ~1-2 us)"},
      {"z_ring_efficiency", "0.9", Unit::kRatio, "payload fraction of the ring links' raw rate",
       "assumption: as neuronlink_efficiency"});
  return table;
}

std::vector<TorusDimension> ultraserver_dims(const ParamSet& params) {
  std::vector<TorusDimension> dims = trn2_instance_dims(params);
  const LinkTier z = z_ring_table().read(params);
  dims.push_back({kTrn2Instances, "z_ring", z.bandwidth, z.latency, z.efficiency, 1, true});
  return dims;
}

}  // namespace

GeneratorEntry trn2_ultraserver_generator() {
  std::vector<ParamSpec> params = trn2_instance_params();
  for (ParamSpec& s : z_ring_table().specs()) params.push_back(std::move(s));
  GeneratorEntry entry{
      "trn2-ultraserver", "trn2-ultraserver",
      "AWS Trn2 UltraServer: 64 chips, 4 instances x 4x4 torus, Z ring", params,
      [](const std::string& spec, const std::string& args, const ParamSet& p) {
        if (!args.empty())
          throw InputError("topology trn2-ultraserver takes no arguments; got 'trn2-ultraserver:" + args +
                           "'");
        auto dims = ultraserver_dims(p);
        Topology t(spec, p, torus_tiers(dims));
        const long per_instance = dims[0].size * dims[1].size;
        for (long z = 0; z < kTrn2Instances; ++z)
          for (long i = 0; i < per_instance; ++i) t.add_chip(static_cast<int>(z));
        add_torus_links(t, dims);
        return t;
      }};
  entry.bisection = [](const Topology& t) { return torus_bisection(ultraserver_dims(t.params())); };
  entry.stack = "neuron";  // collectives/stacks/neuron.json
  return entry;
}

}  // namespace ultrasim
