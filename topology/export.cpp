#include "topology/export.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <sstream>

#include "topology/platform_plan.hpp"
#include "topology/units.hpp"

namespace ultrasim {
namespace {

// Shortest text that reads back as the same double (5e-07, not 5.0000000000000008e-07).
std::string number(double value) {
  char out[40];
  auto [end, ec] = std::to_chars(out, out + sizeof out, value);
  return std::string(out, end);
}

}  // namespace

std::string topology_summary(const Topology& t, const Routes& routes) {
  std::ostringstream out;
  out << "topology     " << t.spec() << "\n";
  out << "chips        " << t.chip_count() << "\n";
  out << "switches     " << t.switch_count() << "\n";
  out << "links        " << t.link_count() << " (full duplex)\n";
  std::map<std::string, std::pair<int, double>> per_tier;
  for (const Link& l : t.links()) {
    auto& [count, bw] = per_tier[l.tier];
    ++count;
    bw = l.bandwidth();
  }
  for (const auto& tier : t.tiers()) {
    if (!per_tier.count(tier)) continue;
    out << "  " << tier << std::string(tier.size() < 11 ? 11 - tier.size() : 1, ' ') << per_tier[tier].first
        << " links, " << format_rate(per_tier[tier].second) << " delivered per direction\n";
  }
  out << "diameter     " << routes.diameter() << " links\n";
  double lo = t.injection_bandwidth(0), hi = lo;
  for (int r = 1; r < t.chip_count(); ++r) {
    lo = std::min(lo, t.injection_bandwidth(r));
    hi = std::max(hi, t.injection_bandwidth(r));
  }
  out << "injection    " << format_rate(lo);
  if (hi != lo) out << " to " << format_rate(hi);
  out << " per chip per direction (delivered)\n";
  out << "forwarding   chips " << (t.chip_forwarding() ? "forward" : "do not forward") << " traffic\n";
  out << "parameters\n";
  for (const auto& spec : t.params().specs())
    out << "  " << spec.name << " = " << t.params().text(spec.name) << "  (" << unit_name(spec.unit) << "; "
        << spec.meaning << "; " << spec.source << ")\n";
  return out.str();
}

nlohmann::json topology_json(const Topology& t) {
  nlohmann::json nodes = nlohmann::json::array();
  const Graph& g = t.graph();
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    const Node& n = g[*v];
    nlohmann::json node{
        {"id", *v}, {"name", n.name}, {"kind", n.kind == NodeKind::kChip ? "chip" : "switch"}};
    if (n.kind == NodeKind::kChip) node["rank"] = n.rank;
    if (n.server >= 0) node["server"] = n.server;
    if (n.rack >= 0) node["rack"] = n.rack;
    if (n.domain >= 0) node["domain"] = n.domain;
    if (n.kind == NodeKind::kSwitch) node["latency_s"] = n.latency;
    nodes.push_back(node);
  }
  nlohmann::json links = nlohmann::json::array();
  for (const Link& l : t.links()) {
    links.push_back({{"name", l.name},
                     {"a", g[l.a].name},
                     {"b", g[l.b].name},
                     {"tier", l.tier},
                     {"raw_bandwidth_GBps", l.raw_bandwidth / 1e9},
                     {"efficiency", l.efficiency},
                     {"bandwidth_GBps", l.bandwidth() / 1e9},
                     {"latency_s", l.latency}});
  }
  return {{"spec", t.spec()},
          {"chips", t.chip_count()},
          {"switches", t.switch_count()},
          {"tiers", t.tiers()},
          {"chip_forwarding", t.chip_forwarding()},
          {"nodes", nodes},
          {"links", links},
          {"parameters", t.params().to_json()}};
}

std::string topology_dot(const Topology& t) {
  std::ostringstream out;
  const Graph& g = t.graph();
  out << "graph \"" << t.spec() << "\" {\n  node [fontname=Helvetica];\n";
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    const Node& n = g[*v];
    out << "  \"" << n.name << "\" [shape=" << (n.kind == NodeKind::kChip ? "box" : "ellipse, style=filled")
        << "];\n";
  }
  for (const Link& l : t.links()) {
    out << "  \"" << g[l.a].name << "\" -- \"" << g[l.b].name << "\" [label=\"" << l.tier << " "
        << l.bandwidth() / 1e9 << " GB/s\"];\n";
  }
  out << "}\n";
  return out.str();
}

std::string topology_simgrid_xml(const Topology& t, const Routes& routes) {
  PlatformPlan plan = make_platform_plan(t, routes);
  std::ostringstream out;
  out << "<?xml version='1.0'?>\n"
      << "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
      << "<!-- " << t.spec()
      << ", exported by ultrasim with its own explicit routes. A link's latency is the\n"
      << "     link's plus half of each switch at its ends, so chip-to-chip routes sum exactly. -->\n"
      << "<platform version=\"4.1\">\n"
      << "  <zone id=\"ultrasim\" routing=\"Full\">\n";
  for (const auto& host : plan.hosts) out << "    <host id=\"" << host << "\" speed=\"1Gf\"/>\n";
  for (const auto& link : plan.links)
    out << "    <link id=\"" << link.name << "\" bandwidth=\"" << number(link.bandwidth) << "Bps\" latency=\""
        << number(link.latency) << "s\" sharing_policy=\"SPLITDUPLEX\"/>\n";
  for (const auto& route : plan.routes) {
    out << "    <route src=\"" << plan.hosts[route.src] << "\" dst=\"" << plan.hosts[route.dst]
        << "\" symmetrical=\"NO\">";
    for (const auto& hop : route.hops)
      out << "<link_ctn id=\"" << plan.links[hop.link].name << "\" direction=\"" << (hop.up ? "UP" : "DOWN")
          << "\"/>";
    out << "</route>\n";
  }
  out << "  </zone>\n</platform>\n";
  return out.str();
}

}  // namespace ultrasim
