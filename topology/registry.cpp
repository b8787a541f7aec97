#include "topology/registry.hpp"

#include "topology/errors.hpp"
#include "topology/suggest.hpp"

namespace ultrasim {

const std::vector<GeneratorEntry>& topology_generators() {
  // clang-format off
  static const std::vector<GeneratorEntry> kTable{
      switch_generator(),
      ring_generator(),
      torus_generator(),
      trn3_generator(),
      trn3_gen1_generator(),
      trn2_generator(),
      trn2_ultraserver_generator(),
      nvl72_generator(),
      hgx_h100_generator(),
      tpu_v5p_generator(),
      mesh_generator(),
      clos_generator(),
      fattree_generator(),
      dragonfly_generator(),
      cluster_generator(),
      file_generator(),
  };
  // clang-format on
  return kTable;
}

const GeneratorEntry& find_generator(const std::string& name) {
  return find_by_name(topology_generators(), name, "topology");
}

std::pair<std::string, std::string> split_topology_spec(const std::string& spec) {
  auto colon = spec.find(':');
  if (colon == std::string::npos) return {spec, ""};
  return {spec.substr(0, colon), spec.substr(colon + 1)};
}

std::vector<ParamSpec> generator_params(const std::string& spec) {
  auto [name, args] = split_topology_spec(spec);
  const GeneratorEntry& entry = find_generator(name);
  std::vector<ParamSpec> specs = entry.params;
  if (entry.extra_params)
    for (ParamSpec& s : entry.extra_params(args)) specs.push_back(std::move(s));
  return specs;
}

Topology make_topology(const std::string& spec, const std::vector<ParamSpec>& extra,
                       const std::vector<std::pair<std::string, std::string>>& overrides) {
  auto [name, args] = split_topology_spec(spec);
  const GeneratorEntry& entry = find_generator(name);
  ParamSet params(generator_params(spec));
  params.declare(extra);
  params.apply(overrides);
  Topology topology = entry.build(spec, args, params);
  topology.validate();
  return topology;
}

std::vector<ParamSpec> simple_link_params() {
  return {
      {"link_bandwidth", "100GBps", Unit::kRate, "bandwidth of every link, per direction", "assumption"},
      {"link_efficiency", "1", Unit::kRatio,
       "payload fraction of link_bandwidth (delivered = link_bandwidth x link_efficiency)",
       "assumption: ideal links; set the fabric's framing overhead, e.g. 60/64 for PCIe Gen6 FLIT "
       "(hardware.md "
       "[INF])"},
      {"link_latency", "500ns", Unit::kTime, "latency of every link (chip-switch-chip is two links)",
       "assumption"},
      {"switch_latency", "0", Unit::kTime, "time a flow spends crossing a switch", "assumption"},
      {"switch_reduction", "false", Unit::kBool, "switches can reduce and multicast (switch-reduce)",
       "off: a generic switch; on for NVLS/SHARP-like what-ifs"},
      {"switch_reduce_bandwidth", "inf", Unit::kOptRate, "rate of a switch's reduction engine",
       "assumption: line rate (free)"},
  };
}

}  // namespace ultrasim
