// clos:LEAVESxCHIPS — a two-level leaf/spine (folded Clos) fabric: LEAVES leaf switches with CHIPS chips
// each, and `spines` spine switches; every leaf links once to every spine.
//
//        spine0     spine1    ...   spineS-1          leaf-spine links ("spine" tier), each carrying
//        / | \      / | \            / | \            CHIPS x link_bandwidth / (oversubscription x S)
//    leaf0   leaf1    ...    leafL-1                  chip-leaf links ("leaf" tier): link_bandwidth
//    | | |   | | |           | | |
//    chips 0..C-1, C..2C-1, ...                       chip rank = leaf x CHIPS + position
//
// Oversubscription is the leaf's down:up bandwidth ratio, so a leaf's uplinks together carry
// CHIPS x link_bandwidth / oversubscription whatever the spine count. Ports are checked against `radix`:
// a leaf needs CHIPS + S ports, a spine LEAVES. Chips do not forward. Several spines give equal-cost
// paths between leaves: the multipath default is "hash" (ECMP); with one path per pair every route
// between two leaves crosses the first spine.
// Chips under one leaf share a `server` (the first-level grouping, as in trn3).
#include <algorithm>
#include <cmath>

#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "topology/registry.hpp"

namespace ultrasim {
namespace {

struct ClosShape {
  long leaves = 0, chips_per_leaf = 0;
};

ClosShape parse_shape(const std::string& args) {
  auto x = args.find('x');
  if (args.empty() || x == std::string::npos || args.find('x', x + 1) != std::string::npos)
    throw InputError("invalid clos shape '" + args +
                     "'; expected clos:LEAVESxCHIPS_PER_LEAF, e.g. clos:8x16 (128 chips)");
  try {
    return {parse_count(args.substr(0, x)), parse_count(args.substr(x + 1))};
  } catch (const InputError&) {
    throw InputError("invalid clos shape '" + args +
                     "'; expected clos:LEAVESxCHIPS_PER_LEAF with positive counts, e.g. clos:8x16");
  }
}

// clos's parameters, typed: the shared link parameters, then radix, spines and oversubscription.
struct ClosParams {
  SimpleLinks links;
  long radix = 0;
  std::string spines;  // "auto" or a count
  double oversubscription = 1;
};

const ParamTable<ClosParams>& clos_table() {
  using P = ClosParams;
  static const ParamTable<P> table =
      ParamTable<P>{}
          .nest(simple_link_table(), &P::links)
          .add({"radix", "64", Unit::kCount, "ports per switch (a leaf uses CHIPS + spines, a spine LEAVES)",
                "Broadcom Tomahawk 5 datasheet: 64 x 800GbE ports (51.2 Tb/s)"},
               &P::radix)
          .add({"spines",
                "auto",
                Unit::kChoice,
                "spine switches; auto: ceil(CHIPS / oversubscription), uplinks at the chip link rate",
                "assumption: one uplink per leaf-spine pair",
                {"auto", "N"}},
               &P::spines)
          .add({"oversubscription", "1", Unit::kRatio,
                "leaf down:up bandwidth ratio (chip links : spine uplinks); 1 = non-blocking",
                "assumption: non-blocking, as AI back-end fabrics are built"},
               &P::oversubscription);
  return table;
}

// `spines` = auto: enough spines that each uplink runs at the chip link rate.
long spine_count(const ClosParams& p, long chips_per_leaf) {
  if (p.spines != "auto") return choice_count(p.spines);
  return static_cast<long>(std::ceil(chips_per_leaf / p.oversubscription - 1e-9));
}

// Throws InputError unless a leaf's ports (chips + spines) and a spine's (leaves) fit the radix.
void check_ports(const std::string& args, const ClosShape& shape, long spines, long radix) {
  const long leaves = shape.leaves, per_leaf = shape.chips_per_leaf;
  if (per_leaf + spines > radix)
    throw InputError("clos:" + args + ": a leaf needs " + std::to_string(per_leaf) + " chip ports + " +
                     std::to_string(spines) + " spine ports = " + std::to_string(per_leaf + spines) +
                     " > radix " + std::to_string(radix) +
                     "; use fewer chips per leaf, fewer spines, more oversubscription or a larger radix");
  if (leaves > radix)
    throw InputError("clos:" + args + ": a spine needs one port per leaf, " + std::to_string(leaves) +
                     " leaves > radix " + std::to_string(radix) +
                     "; use fewer leaves, a larger radix, or fattree:K for a third tier");
}

// clos:LEAVESxCHIPS's topology (`args` is "LEAVESxCHIPS") for parameters `params`.
Topology clos_build(const std::string& spec, const std::string& args, const ParamSet& params) {
  ClosShape shape = parse_shape(args);
  const long leaves = shape.leaves, per_leaf = shape.chips_per_leaf;
  const ClosParams p = clos_table().read(params);
  const double over = p.oversubscription;
  if (!(over > 0)) throw InputError("clos: oversubscription must be > 0, got " + shortest_number(over));
  const long spines = spine_count(p, per_leaf);
  check_ports(args, shape, spines, p.radix);
  check_topology_size(spec, static_cast<double>(leaves) * per_leaf);
  const double bw = p.links.bandwidth, lat = p.links.latency, eff = p.links.efficiency,
               sw = p.links.switch_latency;
  const double uplink = per_leaf * bw / (over * spines);

  Topology t(spec, params, {"leaf", "spine"});
  t.set_chip_forwarding(false);
  t.set_multipath_default("hash");
  std::vector<Vertex> spine;
  for (long s = 0; s < spines; ++s) spine.push_back(t.add_switch("spine" + std::to_string(s), sw));
  for (long l = 0; l < leaves; ++l) {
    Vertex leaf = t.add_switch("leaf" + std::to_string(l), sw);
    for (long c = 0; c < per_leaf; ++c)
      t.add_link(t.add_chip(static_cast<int>(l)), leaf, "leaf", bw, lat, eff);
    for (Vertex s : spine) t.add_link(leaf, s, "spine", uplink, lat, eff);
  }
  return t;
}

}  // namespace

GeneratorEntry clos_generator() {
  GeneratorEntry entry{"clos", "clos:LEAVESxCHIPS",
                       "two-level leaf/spine fabric, radix and oversubscription as parameters",
                       clos_table().specs(), clos_build};
  entry.example = "clos:8x16";
  // With an even number of leaves, half the leaves (and their chips) on each side: the cut is either
  // the chips' own links, (L/2) C B, or the uplinks of half the leaves, (L/2) C B / oversubscription,
  // whichever is smaller (B = link_bandwidth x link_efficiency). Odd L splits a leaf: no formula.
  entry.bisection = [](const Topology& t) -> std::optional<double> {
    ClosShape shape = parse_shape(split_topology_spec(t.spec()).second);
    if (shape.leaves % 2 != 0) return std::nullopt;
    const ClosParams p = clos_table().read(t.params());
    double b = p.links.bandwidth * p.links.efficiency;
    return (shape.leaves / 2) * shape.chips_per_leaf * b * std::min(1.0, 1.0 / p.oversubscription);
  };
  return entry;
}

}  // namespace ultrasim
