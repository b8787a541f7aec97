#include "topology/registry.hpp"

#include <cctype>

#include "topology/base/errors.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {

// One row per topology generator: X(f) names `GeneratorEntry f()`, defined in the generator's own file;
// the order is the order of `ultrasim list`. Adding a topology = its file + one row.
// clang-format off
#define ULTRASIM_GENERATORS(X) \
  X(switch_generator) \
  X(ring_generator) \
  X(torus_generator) \
  X(trn3_generator) \
  X(trn3_gen1_generator) \
  X(trn2_generator) \
  X(trn2_ultraserver_generator) \
  X(nvl72_generator) \
  X(hgx_h100_generator) \
  X(tpu_v5p_generator) \
  X(mesh_generator) \
  X(clos_generator) \
  X(fattree_generator) \
  X(dragonfly_generator) \
  X(cluster_generator) \
  X(file_generator)
// clang-format on

#define ULTRASIM_DECLARE(f) GeneratorEntry f();
ULTRASIM_GENERATORS(ULTRASIM_DECLARE)
#undef ULTRASIM_DECLARE

const std::vector<GeneratorEntry>& topology_generators() {
#define ULTRASIM_ROW(f) f(),
  static const std::vector<GeneratorEntry> kTable{ULTRASIM_GENERATORS(ULTRASIM_ROW)};
#undef ULTRASIM_ROW
  return kTable;
}

const GeneratorEntry& find_generator(const std::string& name) {
  return find_by_name(topology_generators(), name, "topology");
}

std::pair<std::string, std::string> split_chip_selection(const std::string& spec) {
  const auto at = spec.rfind('@');
  if (at == std::string::npos || at + 1 == spec.size() ||
      spec.find_first_not_of("0123456789,-", at + 1) != std::string::npos)
    return {spec, ""};
  return {spec.substr(0, at), spec.substr(at + 1)};
}

std::pair<std::string, std::string> split_topology_spec(const std::string& full) {
  const std::string spec = split_chip_selection(full).first;
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
                       const std::vector<std::pair<std::string, std::string>>& overrides,
                       const std::vector<std::string>& owned_elsewhere) {
  auto [name, args] = split_topology_spec(spec);
  const GeneratorEntry& entry = find_generator(name);
  ParamSet params(generator_params(spec));
  params.declare(extra);
  if (auto unknown = params.apply_known(overrides); !unknown.empty()) {
    std::vector<std::string> known = params.names();
    known.insert(known.end(), owned_elsewhere.begin(), owned_elsewhere.end());
    throw InputError(unknown_name_message("parameter", unknown.front().first, known));
  }
  const auto [whole, chips] = split_chip_selection(spec);
  Topology topology = entry.build(whole, args, params);
  if (!chips.empty()) {
    const std::vector<int> ranks = parse_chip_list(chips, topology.chip_count(), "topology " + spec);
    topology.keep_chips(ranks, spec);
  }
  if (!topology.has_default_stack()) topology.set_default_stack(entry.stack);
  topology.validate();
  return topology;
}

const ParamTable<SimpleLinks>& simple_link_table() {
  static const ParamTable<SimpleLinks> table =
      ParamTable<SimpleLinks>{}
          .add({"link_bandwidth", "100GBps", Unit::kRate, "bandwidth of every link, per direction",
                "assumption"},
               &SimpleLinks::bandwidth)
          .add({"link_efficiency", "1", Unit::kRatio,
                "payload fraction of link_bandwidth (delivered = link_bandwidth x link_efficiency)",
                "assumption: ideal links; set the fabric's framing overhead, e.g. 60/64 for PCIe Gen6 FLIT "
                "(hardware.md [INF])"},
               &SimpleLinks::efficiency)
          .add({"link_latency", "500ns", Unit::kTime, "latency of every link (chip-switch-chip is two links)",
                "assumption"},
               &SimpleLinks::latency)
          .add({"switch_latency", "0", Unit::kTime, "time a flow spends crossing a switch", "assumption"},
               &SimpleLinks::switch_latency)
          .nest(switch_reduce_table("switches can reduce and multicast (switch-reduce)",
                                    "off: a generic switch; on for NVLS/SHARP-like what-ifs",
                                    "rate of a switch's reduction engine", "assumption: line rate (free)"),
                &SimpleLinks::reduce);
  return table;
}

std::vector<ParamSpec> simple_link_params() {
  return simple_link_table().specs();
}

ParamSpec switch_reduction_param(const std::string& meaning, const std::string& source) {
  return {"switch_reduction", "false", Unit::kBool, meaning, source};
}

ParamSpec switch_reduce_bandwidth_param(const std::string& meaning, const std::string& source) {
  return {"switch_reduce_bandwidth", "inf", Unit::kOptRate, meaning, source};
}

ParamTable<SwitchReduce> switch_reduce_table(const std::string& meaning, const std::string& source,
                                             const std::string& rate_meaning,
                                             const std::string& rate_source) {
  return switch_reduce_table(switch_reduction_param(meaning, source),
                             switch_reduce_bandwidth_param(rate_meaning, rate_source));
}

ParamTable<SwitchReduce> switch_reduce_table(ParamSpec reduction, ParamSpec rate) {
  return ParamTable<SwitchReduce>{}
      .add_optional(std::move(reduction), &SwitchReduce::on, &SwitchReduce::declared)
      .add_optional(std::move(rate), &SwitchReduce::rate);
}

SwitchReduce switch_reduce_of(const ParamSet& params) {
  static const ParamTable<SwitchReduce> table = switch_reduce_table("", "", "", "");
  return table.read(params);
}

ParamTable<NvlsParams> nvls_table(const NvlsWarmup& warmup) {
  return ParamTable<NvlsParams>{}
      .add_optional({"nvls_warmup_bytes", warmup.bytes, Unit::kBytes,
                     "the first bytes of each GPU's buffer that an nvls all-reduce moves at its warm-up rate",
                     warmup.source},
                    &NvlsParams::warmup_bytes)
      .add_optional(
          {"nvls_warmup_bandwidth", warmup.rate, Unit::kOptRate,
           "the extra cost of those bytes: each pays 1/rate of chip time before the planes start (inf: none)",
           warmup.source},
          &NvlsParams::warmup_rate);
}

NvlsParams nvls_of(const ParamSet& params) {
  static const ParamTable<NvlsParams> table = nvls_table(NvlsWarmup{});
  return table.read(params);
}

long choice_count(const std::string& value) {
  return !value.empty() && std::isdigit(static_cast<unsigned char>(value.front())) ? parse_count(value) : 0;
}

bool switches_reduce(const ParamSet& params) {
  return switch_reduce_of(params).on;
}

void require_reducing_switches(const Topology& topology, const std::string& algorithm) {
  if (switches_reduce(topology.params())) return;
  throw InputError(algorithm + " needs reduction-capable switches; topology " + topology.spec() +
                   (switch_reduce_of(topology.params()).declared
                        ? " has switch_reduction=false (set switch_reduction=true for a what-if)"
                        : " has none (no switch_reduction parameter)"));
}

}  // namespace ultrasim
