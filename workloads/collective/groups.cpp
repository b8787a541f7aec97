#include "workloads/collective/groups.hpp"

#include <algorithm>
#include <sstream>

#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {

ParallelLayout parse_layout(const std::string& text, int chips) {
  ParallelLayout layout;
  bool dp_given = false;
  std::vector<std::string> seen;
  for (const std::string& item : split_items(text, ',', true)) {
    const auto eq = item.find('=');
    const std::string axis = item.substr(0, eq);
    if (eq == std::string::npos || (axis != "tp" && axis != "ep" && axis != "dp" && axis != "pp"))
      throw InputError("--layout '" + text + "': expected AXIS=N for axes tp, ep, dp, pp (e.g. tp=4,dp=36)");
    if (std::find(seen.begin(), seen.end(), axis) != seen.end())
      throw InputError("--layout '" + text + "': " + axis + " is given twice; give each axis once");
    seen.push_back(axis);
    const int n =
        static_cast<int>(with_context("--layout " + axis, [&] { return parse_count(item.substr(eq + 1)); }));
    (axis == "tp" ? layout.tp : axis == "ep" ? layout.ep : axis == "dp" ? layout.dp : layout.pp) = n;
    dp_given = dp_given || axis == "dp";
  }
  // Each axis is below 10^9, so three or four of them can overflow a long: the product is checked.
  long others = 1, product = 0;
  bool overflow = false;
  for (int n : {layout.tp, layout.ep, layout.pp})
    overflow = overflow || __builtin_mul_overflow(others, n, &others);
  if (!overflow && !dp_given && others > 0 && chips % others == 0)
    layout.dp = static_cast<int>(chips / others);
  overflow = overflow || __builtin_mul_overflow(others, layout.dp, &product);
  if (overflow || product != chips)
    throw InputError("--layout '" + text + "': tp x ep x dp x pp = " +
                     (overflow ? std::string("more than 2^63") : std::to_string(product)) +
                     ", but the topology has " + std::to_string(chips) + " chips");
  return layout;
}

bool is_layout_axis(const std::string& spec) {
  return spec == "tp" || spec == "ep" || spec == "dp" || spec == "pp";
}

Groups resolve_groups(const std::string& spec, const std::string& layout_text, const Topology& topology) {
  const int p = topology.chip_count();
  if (spec.empty()) return {};
  std::vector<std::vector<int>> groups;
  if (spec == "server" || spec == "rack" || spec == "domain") {
    std::vector<int> labels;
    try {
      labels = level_labels(spec, topology);
    } catch (const InputError&) {  // its hint names the algorithms' groups parameter
      throw InputError("--groups " + spec + ": topology " + topology.spec() + " has no " + spec +
                       "s; use blocks:N");
    }
    groups = make_groups(spec, p, labels).members;
  } else if (spec.starts_with("blocks:")) {
    const int n =
        static_cast<int>(with_context("--groups " + spec, [&] { return parse_count(spec.substr(7)); }));
    if (p % n != 0)
      throw InputError("--groups " + spec + ": " + std::to_string(p) + " chips do not split into blocks of " +
                       std::to_string(n));
    groups = make_groups(std::to_string(n), p, {}).members;
  } else if (is_layout_axis(spec)) {
    if (layout_text.empty()) throw InputError("--groups " + spec + " needs --layout tp=T,ep=E,dp=D,pp=P");
    const ParallelLayout l = parse_layout(layout_text, p);
    const int size = spec == "tp" ? l.tp : spec == "ep" ? l.ep : spec == "dp" ? l.dp : l.pp;
    for (int pp = 0; pp < (spec == "pp" ? 1 : l.pp); ++pp)
      for (int dp = 0; dp < (spec == "dp" ? 1 : l.dp); ++dp)
        for (int ep = 0; ep < (spec == "ep" ? 1 : l.ep); ++ep)
          for (int tp = 0; tp < (spec == "tp" ? 1 : l.tp); ++tp) {
            groups.emplace_back();
            for (int i = 0; i < size; ++i)
              groups.back().push_back(l.rank(spec == "tp" ? i : tp, spec == "ep" ? i : ep,
                                             spec == "dp" ? i : dp, spec == "pp" ? i : pp));
          }
    std::sort(groups.begin(), groups.end());
  } else if (spec.starts_with("chips:")) {
    for (const std::string& list : split_items(spec.substr(6), '/', true))
      groups.push_back(parse_chip_list(list, p, "--groups"));
  } else {
    throw InputError(
        "--groups '" + spec +
        "': expected server, rack, domain, blocks:N, tp, ep, dp, pp (with --layout) or chips:LIST/LIST");
  }
  std::vector<bool> taken(p, false);
  for (const auto& group : groups) {
    if (group.size() != groups.front().size())
      throw InputError("--groups " + spec + ": groups of " + std::to_string(groups.front().size()) + " and " +
                       std::to_string(group.size()) + " chips; every group must have the same size");
    for (int r : group) {
      if (taken[r])
        throw InputError("--groups " + spec + ": chip " + std::to_string(r) + " is in two groups");
      taken[r] = true;
    }
  }
  if (groups.front().size() < 2) throw InputError("--groups " + spec + ": a group needs at least 2 chips");
  return Groups::from_members(std::move(groups), p);
}

}  // namespace ultrasim
