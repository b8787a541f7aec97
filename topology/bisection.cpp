#include "topology/bisection.hpp"

#include <cmath>
#include <cstdint>

#include <boost/graph/push_relabel_max_flow.hpp>

#include "topology/registry.hpp"

namespace ultrasim {
namespace {

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, std::int64_t,
                    boost::property<boost::edge_residual_capacity_t, std::int64_t,
                                    boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

// Adds the arc u -> v and its zero-capacity reverse, as push-relabel wants.
void add_arc(FlowGraph& g, std::size_t u, std::size_t v, std::int64_t capacity) {
  auto forward = boost::add_edge(u, v, g).first;
  auto backward = boost::add_edge(v, u, g).first;
  boost::put(boost::edge_capacity, g, forward, capacity);
  boost::put(boost::edge_capacity, g, backward, 0);
  boost::put(boost::edge_reverse, g, forward, backward);
  boost::put(boost::edge_reverse, g, backward, forward);
}

}  // namespace

std::string Bisection::method() const {
  if (!bandwidth) return "n/a: fewer than two chips";
  return exact ? "exact, formula" : "min cut between rank halves, computed";
}

double min_cut_between_rank_halves(const Topology& t) {
  const int p = t.chip_count();
  if (p < 2) return 0;
  // Integer capacities keep push-relabel exact. Rates are whole B/s in practice, and then the unit is
  // 1 B/s; otherwise (fractional or huge rates) the largest capacity is scaled to 2^40 units.
  double largest = 0, total = 0;
  bool whole = true;
  for (const Link& l : t.links()) {
    largest = std::max(largest, l.bandwidth());
    total += 2 * l.bandwidth();
    whole = whole && l.bandwidth() == std::floor(l.bandwidth());
  }
  const double unit = whole && total < 0x1p53 ? 1.0 : largest / 0x1p40;
  auto units = [&](double bandwidth) { return static_cast<std::int64_t>(std::llround(bandwidth / unit)); };

  const std::size_t n = boost::num_vertices(t.graph());
  FlowGraph g(n + 2);
  const std::size_t source = n, sink = n + 1;
  std::int64_t infinite = 1;
  for (const Link& l : t.links()) infinite += 2 * units(l.bandwidth());
  for (const Link& l : t.links()) {
    add_arc(g, l.a, l.b, units(l.bandwidth()));
    add_arc(g, l.b, l.a, units(l.bandwidth()));
  }
  for (int r = 0; r < p; ++r) {
    if (r < p / 2)
      add_arc(g, source, t.chip(r), infinite);
    else
      add_arc(g, t.chip(r), sink, infinite);
  }
  return static_cast<double>(boost::push_relabel_max_flow(g, source, sink)) * unit;
}

Bisection bisection(const Topology& t) {
  if (t.chip_count() < 2) return {};
  const std::string name = split_topology_spec(t.spec()).first;
  // A part of a fabric (SPEC@CHIPS) has no closed form: its generator's is the whole fabric's.
  if (!split_chip_selection(t.spec()).second.empty()) return {min_cut_between_rank_halves(t), false};
  for (const GeneratorEntry& entry : topology_generators()) {
    if (entry.name != name || !entry.bisection) continue;
    if (auto exact = entry.bisection(t)) return {*exact, true};
  }
  return {min_cut_between_rank_halves(t), false};
}

}  // namespace ultrasim
