// cluster:K:PRESET — K scale-up domains, each built by the generator spec PRESET (trn3, torus:4x4,
// clos:2x8, ...), joined through a scale-out network: every chip has one NIC link (EFA-like) to it.
// Chip rank = domain x P + the chip's rank inside its domain (P chips per domain); a domain's switches are
// named domain<d>_<name>; server s and rack r of domain d become d x S + s and d x R + r (S servers and
// R racks per domain), and every chip carries its domain (JSON "domain"). PRESET's parameters stay
// settable with --set and apply to every domain.
//
// scaleout=rail (rail-optimised, as NVIDIA's DGX SuperPOD):     scaleout=spine:
//     rail0     rail1   ...  railP-1                               spine0 .. spineS-1
//     |   |     |   |        |   |                                  /    \   (each leaf to each spine)
//   d0c0 d1c0  d0c1 d1c1   ...                                 domain0_leaf  domain1_leaf ...
//   chip i of every domain on rail switch i ("nic" tier)        every chip of domain d on its leaf
//                                                               ("nic"), leaves to spines ("scaleout")
// On rails, chip i reaches chip j != i of another domain only through a chip: routes go first inside the
// source domain to the chip with the destination's index, then along that rail (NCCL's PXN: the scale-up
// hop first, so that traffic never crosses rails in the scale-out network). The two orders cost the same;
// the routing's tie-break (lower tiers first, and the inner tiers come before "nic") picks this one. So
// rails need chips that relay; PRESETs with chip_forwarding=false are rejected with scaleout=rail.
// Latency: crossing the scale-out network chip to chip costs scaleout_latency (EFA's ~15 us HBM to HBM),
// carried half by each NIC link; scale-out switches and spine uplinks add their own (0 by default).
#include <algorithm>

#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "topology/registry.hpp"

namespace ultrasim {
namespace {

struct ClusterSpec {
  long domains = 0;
  std::string preset;  // the inner generator spec
};

ClusterSpec parse_cluster(const std::string& args) {
  auto colon = args.find(':');
  if (args.empty() || colon == std::string::npos || colon + 1 == args.size())
    throw InputError(
        "topology cluster needs a domain count and a preset, e.g. cluster:4:trn3 or "
        "cluster:2:torus:4x4; got 'cluster" +
        (args.empty() ? std::string() : ":" + args) + "'");
  ClusterSpec c;
  std::string count = args.substr(0, colon);
  try {
    c.domains = parse_count(count);
  } catch (const InputError&) {
    throw InputError("invalid domain count '" + count + "' in 'cluster:" + args +
                     "'; expected a positive integer, e.g. cluster:4:trn3");
  }
  c.preset = args.substr(colon + 1);
  if (split_topology_spec(c.preset).first == "cluster")
    throw InputError("cluster:" + args +
                     ": a cluster of clusters is not supported; use one cluster with K x K' domains");
  return c;
}

int levels(const Topology& t, int Node::*level) {
  int most = -1;
  for (int r = 0; r < t.chip_count(); ++r) most = std::max(most, t.node(t.chip(r)).*level);
  return most + 1;
}

// cluster's own parameters, typed (PRESET's come on top, through extra_params); cluster_table() declares
// each with its default and source.
struct ClusterParams {
  std::string scaleout;  // rail or spine
  double nic_bandwidth = 0, nic_efficiency = 0;
  double scaleout_latency = 0, scaleout_switch_latency = 0;
  long scaleout_spines = 0;
  double scaleout_oversubscription = 1, scaleout_uplink_latency = 0;
};

const ParamTable<ClusterParams>& cluster_table() {
  using P = ClusterParams;
  static const ParamTable<P> table =
      ParamTable<P>{}
          .add({"scaleout",
                "rail",
                Unit::kChoice,
                "scale-out fabric: rail (a rail switch per chip index) or spine (a leaf per domain, then "
                "spines)",
                "assumption: rail-optimised, as NVIDIA DGX SuperPOD reference architectures",
                {"rail", "spine"}},
               &P::scaleout)
          .add({"nic_bandwidth", "200Gbps", Unit::kRate,
                "raw NIC bandwidth per chip into the scale-out network, per direction",
                "hardware.md [AWS]: EFA 200 Gbps per Trainium chip (Trn2; Trn3 28.8 Tbps / 144 [INF])"},
               &P::nic_bandwidth)
          .add({"nic_efficiency", "1", Unit::kRatio, "payload fraction of the NIC links' raw rate",
                "assumption: EFA framing overhead not published"},
               &P::nic_efficiency)
          .add({"scaleout_latency", "15us", Unit::kTime,
                "chip-to-chip latency across the scale-out network (each NIC link carries half)",
                "hardware.md [AWS]: EFA hop HBM-to-HBM ~15 us"},
               &P::scaleout_latency)
          .add({"scaleout_switch_latency", "0", Unit::kTime,
                "time a flow spends crossing a rail, leaf or spine switch",
                "assumption: included in scaleout_latency"},
               &P::scaleout_switch_latency)
          .add({"scaleout_spines", "1", Unit::kCount,
                "spine switches (scaleout=spine); each leaf links once to each",
                "assumption: one logical non-blocking spine; N spines are equal-cost paths (ECMP)"},
               &P::scaleout_spines)
          .add({"scaleout_oversubscription", "1", Unit::kRatio,
                "leaf down:up bandwidth ratio (scaleout=spine): a leaf's spine links carry P x nic_bandwidth "
                "/ this",
                "assumption: non-blocking"},
               &P::scaleout_oversubscription)
          .add({"scaleout_uplink_latency", "0", Unit::kTime, "latency of a leaf-spine link (scaleout=spine)",
                "assumption: included in scaleout_latency"},
               &P::scaleout_uplink_latency);
  return table;
}

// PRESET's chip_forwarding, where it declares one (trn3 does; nvl72 does not). Read only: PRESET declares
// it (the spec below gives its name and unit; its default, meaning and source are PRESET's).
struct PresetForwarding {
  bool declared = false;
  bool on = true;
};

const ParamTable<PresetForwarding>& preset_forwarding_table() {
  static const ParamTable<PresetForwarding> table = ParamTable<PresetForwarding>{}.add_optional(
      {"chip_forwarding", "true", Unit::kBool, "", ""}, &PresetForwarding::on, &PresetForwarding::declared);
  return table;
}

// Adds `domains` copies of `inner` to `t`: chips first (global ranks in order), then switches, then
// links, as in PRESET.
void cluster_add_domains(Topology& t, const Topology& inner, long domains) {
  const long P = inner.chip_count();
  const int servers = levels(inner, &Node::server), racks = levels(inner, &Node::rack);
  const Graph& g = inner.graph();
  for (long d = 0; d < domains; ++d) {
    std::vector<Vertex> copy(boost::num_vertices(g));
    for (int r = 0; r < P; ++r) {
      const Node& n = inner.node(inner.chip(r));
      copy[inner.chip(r)] =
          t.add_chip(n.server < 0 ? -1 : static_cast<int>(d * servers + n.server),
                     n.rack < 0 ? -1 : static_cast<int>(d * racks + n.rack), static_cast<int>(d));
    }
    for (Vertex s : inner.switches())
      copy[s] = t.add_switch("domain" + std::to_string(d) + "_" + inner.node(s).name, inner.node(s).latency);
    for (const Link& l : inner.links())
      t.add_link(copy[l.a], copy[l.b], l.tier, l.raw_bandwidth, l.latency, l.efficiency, l.lanes);
  }
}

// Adds the scale-out network to `t`, whose `domains` domains have P chips each: a rail switch per chip
// index, or a leaf per domain under the spines.
void cluster_add_scaleout(Topology& t, const ClusterParams& p, long domains, long P) {
  const double nic = p.nic_bandwidth, eff = p.nic_efficiency, half = p.scaleout_latency / 2,
               sw = p.scaleout_switch_latency;
  if (p.scaleout == "rail") {
    for (long i = 0; i < P; ++i) {
      Vertex r = t.add_switch("rail" + std::to_string(i), sw);
      for (long d = 0; d < domains; ++d)
        t.add_link(t.chip(static_cast<int>(d * P + i)), r, kScaleOutTier, nic, half, eff);
    }
    return;
  }
  const long spines = p.scaleout_spines;
  const double over = p.scaleout_oversubscription;
  std::vector<Vertex> spine;
  for (long s = 0; s < spines; ++s) spine.push_back(t.add_switch("spine" + std::to_string(s), sw));
  for (long d = 0; d < domains; ++d) {
    Vertex leaf = t.add_switch("domain" + std::to_string(d) + "_leaf", sw);
    for (long i = 0; i < P; ++i)
      t.add_link(t.chip(static_cast<int>(d * P + i)), leaf, kScaleOutTier, nic, half, eff);
    for (Vertex s : spine)
      t.add_link(leaf, s, "scaleout", P * nic / (over * spines), p.scaleout_uplink_latency, eff);
  }
}

// cluster:K:PRESET's topology (`args` is "K:PRESET") for parameters `params` (cluster's and PRESET's).
Topology cluster_build(const std::string& spec, const std::string& args, const ParamSet& params) {
  const ClusterSpec c = parse_cluster(args);
  auto [inner_name, inner_args] = split_topology_spec(c.preset);
  Topology inner = find_generator(inner_name).build(c.preset, inner_args, params);
  inner.validate();
  const long P = inner.chip_count();
  check_topology_size(spec, static_cast<double>(c.domains) * static_cast<double>(P));
  const ClusterParams p = cluster_table().read(params);
  const bool rail = p.scaleout == "rail";
  const double over = p.scaleout_oversubscription;
  if (!(over > 0))
    throw InputError("cluster: scaleout_oversubscription must be > 0, got " + shortest_number(over));
  const PresetForwarding forwarding = preset_forwarding_table().read(params);
  if (rail && forwarding.declared && !forwarding.on)
    throw InputError("cluster:" + args +
                     ": scaleout=rail relays through chips (PXN) but chip_forwarding=false; use "
                     "scaleout=spine");

  std::vector<std::string> tiers = inner.tiers();
  tiers.push_back(kScaleOutTier);
  if (!rail) tiers.push_back("scaleout");
  Topology t(spec, params, tiers);
  t.set_chip_forwarding(rail || inner.chip_forwarding());
  t.set_default_stack(find_generator(inner_name).stack);  // inside a domain, its preset's library
  t.set_multipath_default(inner.multipath_default() == "single" && !rail && p.scaleout_spines > 1
                              ? "hash"
                              : inner.multipath_default());
  cluster_add_domains(t, inner, c.domains);
  cluster_add_scaleout(t, p, c.domains, P);
  // Domains are identical copies and the scale-out tier treats them alike (rail i joins chip i of every
  // domain; every leaf joins every spine alike): permuting domains is a symmetry, so domain 0's chips
  // (or the inner preset's own route sources) stand for all.
  std::vector<int> sources = inner.route_sources();
  if (sources.empty())
    for (int r = 0; r < P; ++r) sources.push_back(r);
  t.set_route_sources(std::move(sources));
  return t;
}

}  // namespace

GeneratorEntry cluster_generator() {
  GeneratorEntry entry{"cluster", "cluster:K:PRESET",
                       "K scale-up domains of PRESET joined by an EFA-like rail or spine network",
                       cluster_table().specs(), cluster_build};
  entry.example = "cluster:2:trn3";
  entry.extra_params = [](const std::string& args) { return generator_params(parse_cluster(args).preset); };
  return entry;
}

}  // namespace ultrasim
