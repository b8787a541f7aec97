#include "topology/export.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "topology/bisection.hpp"
#include "topology/platform_plan.hpp"

namespace ultrasim {
std::vector<TierStats> tier_stats(const Topology& t) {
  const int p = t.chip_count();
  std::vector<TierStats> stats;
  for (const std::string& tier : t.tiers()) stats.push_back(TierStats{tier});
  // Per chip and tier: the sum over the chip's links of that tier (a chip-to-chip link counts for both).
  std::vector<std::vector<double>> raw(stats.size(), std::vector<double>(p, 0.0));
  std::vector<std::vector<double>> delivered = raw;
  const Graph& g = t.graph();
  for (const Link& l : t.links()) {
    TierStats& s = stats[l.tier_index];
    auto widen = [first = s.links == 0](std::pair<double, double>& range, double value) {
      range = first ? std::pair{value, value}
                    : std::pair{std::min(range.first, value), std::max(range.second, value)};
    };
    widen(s.link_raw, l.raw_bandwidth);
    widen(s.link_delivered, l.bandwidth());
    ++s.links;
    s.lanes += l.lanes;
    for (std::size_t end : {l.a, l.b}) {
      if (g[end].kind != NodeKind::kChip || g[end].rank < 0) continue;  // < 0: not a chip of SPEC@CHIPS
      raw[l.tier_index][g[end].rank] += l.raw_bandwidth;
      delivered[l.tier_index][g[end].rank] += l.bandwidth();
    }
  }
  for (std::size_t i = 0; i < stats.size(); ++i) {
    auto [raw_lo, raw_hi] = std::minmax_element(raw[i].begin(), raw[i].end());
    auto [del_lo, del_hi] = std::minmax_element(delivered[i].begin(), delivered[i].end());
    if (p == 0) continue;
    stats[i].chip_raw = {*raw_lo, *raw_hi};
    stats[i].chip_delivered = {*del_lo, *del_hi};
  }
  return stats;
}

namespace {

std::optional<int> diameter_or_none(const Routes& routes) {
  try {
    return routes.diameter();
  } catch (const SimulationError&) {
    return std::nullopt;  // some chips cannot reach others (chip_forwarding off)
  }
}

// "256 GB/s", "8.64 TB/s".
std::string rate_text(double bytes_per_second) {
  char out[64];
  if (bytes_per_second >= 1e12)
    std::snprintf(out, sizeof out, "%g TB/s", bytes_per_second / 1e12);
  else
    std::snprintf(out, sizeof out, "%g GB/s", bytes_per_second / 1e9);
  return out;
}

std::string range_text(std::pair<double, double> range) {
  if (range.first == range.second) return rate_text(range.first);
  return rate_text(range.first) + " to " + rate_text(range.second);
}

std::pair<double, double> injection_range(const Topology& t, bool raw) {
  double lo = 0, hi = 0;
  for (int r = 0; r < t.chip_count(); ++r) {
    double total = 0;
    for (auto [e, end] = boost::out_edges(t.chip(r), t.graph()); e != end; ++e)
      total += raw ? t.link(*e).raw_bandwidth : t.link(*e).bandwidth();
    lo = r == 0 ? total : std::min(lo, total);
    hi = r == 0 ? total : std::max(hi, total);
  }
  return {lo, hi};
}

std::string padded(const std::string& text, std::size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

}  // namespace

std::string topology_summary(const Topology& t, const Routes& routes) {
  std::ostringstream out;
  out << "topology     " << t.spec();
  if (t.origin()) out << " (exported from " << t.origin()->spec << ")";
  out << "\n";
  out << "chips        " << t.chip_count() << "\n";
  out << "switches     " << t.switch_count() << "\n";
  int lanes = 0;
  for (const Link& l : t.links()) lanes += l.lanes;
  out << "links        " << t.link_count() << " (full duplex), " << lanes << " physical lanes\n";
  std::size_t tier_width = 12;  // the widest tier name and a space
  for (const std::string& tier : t.tiers()) tier_width = std::max(tier_width, tier.size() + 1);
  out << "  " << padded("tier", tier_width) << padded("links", 7) << padded("lanes", 7)
      << padded("per chip raw", 20) << "per chip delivered (per direction)\n";
  for (const TierStats& s : tier_stats(t)) {
    if (s.links == 0) continue;
    out << "  " << padded(s.tier, tier_width) << padded(std::to_string(s.links), 7)
        << padded(std::to_string(s.lanes), 7);
    if (s.chip_raw.second > 0)
      out << padded(range_text(s.chip_raw), 20) << range_text(s.chip_delivered) << "\n";
    else  // switch-to-switch links: no chip has one, so say what each link carries
      out << padded(range_text(s.link_raw) + " a link", 20) << range_text(s.link_delivered) << " a link\n";
  }
  if (auto diameter = diameter_or_none(routes))
    out << "diameter     " << *diameter << " links\n";
  else
    out << "diameter     none: some chips cannot reach others (chips do not forward)\n";
  out << "injection    " << range_text(injection_range(t, false))
      << " per chip per direction (delivered; raw " << range_text(injection_range(t, true)) << ")\n";
  Bisection b = bisection(t);
  out << "bisection    ";
  if (b.bandwidth)
    out << rate_text(*b.bandwidth) << " per direction (" << b.method() << ")\n";
  else
    out << b.method() << "\n";
  out << "forwarding   chips " << (t.chip_forwarding() ? "forward" : "do not forward") << " traffic\n";
  out << "multipath    " << t.multipath_default() << " (what multipath=auto means here)\n";
  out << "parameters\n";
  for (const auto& spec : t.params().specs())
    out << "  " << spec.name << " = " << t.params().text(spec.name) << "  (" << unit_name(spec.unit) << "; "
        << spec.meaning << "; " << spec.source << ")\n";
  return out.str();
}

nlohmann::json topology_graph_json(const Topology& t) {
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
                     {"raw_bandwidth_Bps", l.raw_bandwidth},
                     {"raw_bandwidth_GBps", l.raw_bandwidth / 1e9},
                     {"efficiency", l.efficiency},
                     {"bandwidth_GBps", l.bandwidth() / 1e9},
                     {"latency_s", l.latency},
                     {"lanes", l.lanes}});
  }
  return {{"tiers", t.tiers()},
          {"chip_forwarding", t.chip_forwarding()},
          {"multipath_default", t.multipath_default()},
          {"nodes", nodes},
          {"links", links}};
}

nlohmann::json topology_json(const Topology& t, const Routes& routes) {
  nlohmann::json out = topology_graph_json(t);
  // An imported topology keeps the spec and parameters its file records, updated with the parameters
  // in effect now, so that exporting it again reproduces the file.
  nlohmann::json parameters = t.origin() ? t.origin()->parameters : nlohmann::json::object();
  parameters.update(t.params().to_json());
  out["schema_version"] = 1;
  out["spec"] = t.origin() ? t.origin()->spec : t.spec();
  out["stack"] = t.default_stack();
  out["chips"] = t.chip_count();
  out["switches"] = t.switch_count();
  out["parameters"] = parameters;
  nlohmann::json per_tier = nlohmann::json::array();
  for (const TierStats& s : tier_stats(t))
    per_tier.push_back({{"tier", s.tier},
                        {"links", s.links},
                        {"lanes", s.lanes},
                        {"chip_raw_Bps", {s.chip_raw.first, s.chip_raw.second}},
                        {"chip_delivered_Bps", {s.chip_delivered.first, s.chip_delivered.second}}});
  out["per_tier"] = per_tier;
  auto diameter = diameter_or_none(routes);
  out["diameter_links"] = diameter ? nlohmann::json(*diameter) : nlohmann::json(nullptr);
  auto delivered = injection_range(t, false), raw = injection_range(t, true);
  out["injection_Bps"] = {delivered.first, delivered.second};
  out["injection_raw_Bps"] = {raw.first, raw.second};
  Bisection b = bisection(t);
  out["bisection_Bps"] = b.bandwidth ? nlohmann::json(*b.bandwidth) : nlohmann::json(nullptr);
  out["bisection_method"] = b.method();
  return out;
}

namespace {

// Edge colours by tier index, colour-blind-safe (Okabe-Ito), with the names the legend uses.
struct Colour {
  const char* hex;
  const char* name;
};
const Colour kTierColours[] = {{"#0072B2", "blue"},   {"#D55E00", "vermilion"}, {"#009E73", "green"},
                               {"#CC79A7", "purple"}, {"#E69F00", "orange"},    {"#56B4E9", "sky blue"},
                               {"#000000", "black"},  {"#F0E442", "yellow"}};
const Colour& tier_colour(int tier_index) {
  return kTierColours[std::min(tier_index, 7)];
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Where the vertices are drawn: rack -> server -> vertices (-1: none).
using DotLayout = std::map<int, std::map<int, std::vector<std::size_t>>>;

// The layout of `t`'s vertices: chips by their server and rack; a switch inside the server (or else the
// rack) that all the chips it links to share, else at the top level. A server is drawn inside the rack
// of its first vertex.
DotLayout dot_layout(const Topology& t) {
  const Graph& g = t.graph();
  const std::size_t n = boost::num_vertices(g);
  std::vector<int> server(n, -1), rack(n, -1);
  for (std::size_t v = 0; v < n; ++v) server[v] = g[v].server, rack[v] = g[v].rack;
  for (Vertex s : t.switches()) {
    std::set<int> servers, racks;
    bool any_chip = false;
    for (auto [e, end] = boost::out_edges(s, g); e != end; ++e) {
      const Node& other = g[boost::target(*e, g)];
      if (other.kind != NodeKind::kChip) continue;
      any_chip = true;
      servers.insert(other.server);
      racks.insert(other.rack);
    }
    if (!any_chip) continue;
    if (racks.size() == 1) rack[s] = *racks.begin();
    if (servers.size() == 1 && *servers.begin() >= 0) server[s] = *servers.begin();
  }
  DotLayout layout;
  std::map<int, int> rack_of_server;
  for (std::size_t v = 0; v < n; ++v) {
    int r = rack[v];
    if (server[v] >= 0) r = rack_of_server.emplace(server[v], rack[v]).first->second;
    layout[r][server[v]].push_back(v);
  }
  return layout;
}

// Writes the graph's attributes to `out`: the legend (chips, switches, each tier's rate and colour) and
// the default node and edge styles.
void dot_write_header(std::ostream& out, const Topology& t) {
  std::ostringstream legend;
  legend << t.spec() << ": " << t.chip_count() << " chips, " << t.switch_count() << " switches; links";
  auto stats = tier_stats(t);
  const char* separator = ": ";
  for (std::size_t i = 0; i < stats.size(); ++i)
    if (stats[i].links > 0)
      legend << std::exchange(separator, ", ") << stats[i].tier << " "
             << format_rate(stats[i].chip_delivered.second) << " per chip ("
             << tier_colour(static_cast<int>(i)).name << ")";
  out << "  graph [fontname=Helvetica, fontsize=12, labelloc=t, label=" << quoted(legend.str())
      << ", newrank=true];\n";
  out << "  node [fontname=Helvetica, fontsize=9, margin=\"0.04,0.02\", height=0.3];\n";
  out << "  edge [penwidth=0.7];\n";
}

// Writes vertex `v` of `g` to `out` at `indent`: a chip as a box, a switch as a grey ellipse.
void dot_write_node(std::ostream& out, const Graph& g, std::size_t v, const std::string& indent) {
  const Node& node = g[v];
  out << indent << quoted(node.name);
  if (node.kind == NodeKind::kChip)
    out << " [shape=box];\n";
  else
    out << " [shape=ellipse, style=filled, fillcolor=\"#dddddd\"];\n";
}

// Writes the vertices to `out` as `layout` places them, a cluster per rack and per server.
void dot_write_nodes(std::ostream& out, const Graph& g, const DotLayout& layout) {
  for (const auto& [r, servers] : layout) {
    std::string indent = "  ";
    if (r >= 0) {
      out << "  subgraph cluster_rack" << r << " {\n    label=\"rack " << r
          << "\"; style=rounded; color=\"#888888\";\n";
      indent = "    ";
    }
    for (const auto& [s, vertices] : servers) {
      std::string inner = indent;
      if (s >= 0) {
        out << indent << "subgraph cluster_server" << s << " {\n"
            << indent << "  label=\"server " << s << "\"; style=\"rounded,filled\"; fillcolor=\"#f4f4f4\";\n";
        inner = indent + "  ";
      }
      for (std::size_t v : vertices) dot_write_node(out, g, v, inner);
      if (s >= 0) out << indent << "}\n";
    }
    if (r >= 0) out << "  }\n";
  }
}

// Writes `t`'s links to `out`, coloured by tier. Beyond 48 links, labels hide the graph (tooltips only)
// and edges are drawn translucent so that the clusters stay readable under them.
void dot_write_links(std::ostream& out, const Topology& t) {
  const Graph& g = t.graph();
  const bool labels = t.link_count() <= 48;
  const char* alpha = labels ? "" : "A0";
  for (const Link& l : t.links()) {
    std::string text = l.tier + " " + format_rate(l.bandwidth());
    if (l.lanes > 1) text += " (" + std::to_string(l.lanes) + " lanes)";
    out << "  " << quoted(g[l.a].name) << " -- " << quoted(g[l.b].name) << " [color=\""
        << tier_colour(l.tier_index).hex << alpha << "\", tooltip=" << quoted(text);
    if (labels) out << ", label=" << quoted(text) << ", fontsize=8";
    out << "];\n";
  }
}

}  // namespace

std::string topology_dot(const Topology& t) {
  const DotLayout layout = dot_layout(t);
  std::ostringstream out;
  out << "graph " << quoted(t.spec()) << " {\n";
  dot_write_header(out, t);
  dot_write_nodes(out, t.graph(), layout);
  dot_write_links(out, t);
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
    out << "    <link id=\"" << link.name << "\" bandwidth=\"" << shortest_number(link.bandwidth)
        << "Bps\" latency=\"" << shortest_number(link.latency) << "s\" sharing_policy=\"SPLITDUPLEX\"/>\n";
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

double simgrid_xml_bytes(const Topology& t, const Routes& routes) {
  const int p = t.chip_count();
  const double switches = static_cast<double>(t.switches().size());
  double link_name = 0, host_name = 0;
  for (const Link& link : t.links()) link_name += static_cast<double>(link.name.size());
  link_name /= std::max<double>(1, static_cast<double>(t.links().size()));
  for (int r = 0; r < p; ++r) host_name += static_cast<double>(t.node(t.chip(r)).name.size());
  host_name /= std::max(1, p);
  // A sample of sources: their routes' hops and, under stripe or hash, their path sets (the export holds
  // every path of a pair, make_platform_plan's kEvery).
  const bool sets = routes.policy() != Multipath::kSingle;
  const int sources = std::min(p, 8);
  double hops = 0, paths = 0, pairs = 0;
  for (int i = 0; i < sources; ++i) {
    const int a = static_cast<int>(static_cast<long long>(i) * p / sources);
    for (int b = 0; b < p; ++b) {
      if (a == b) continue;
      hops += static_cast<double>(routes.between(a, b).hops.size());
      paths += sets ? static_cast<double>(routes.equal_paths(t.chip(a), t.chip(b)).size()) : 1.0;
      pairs += 1;
    }
  }
  if (pairs == 0) return 4096;
  constexpr double kRouteBytes = 51, kHopBytes = 36;  // <route src="" dst="" symmetrical="NO"></route>
  const double route = kRouteBytes + 2 * host_name + hops / pairs * (kHopBytes + link_name);
  const double chip_routes = static_cast<double>(p) * (p - 1) * (paths / pairs);
  const double switch_routes = 2.0 * p * switches;
  const double hosts_and_links =
      (p + switches) * 48 + static_cast<double>(t.links().size()) * (120 + link_name);
  return 4096 + hosts_and_links + (chip_routes + switch_routes) * route;
}

}  // namespace ultrasim
