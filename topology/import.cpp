#include "topology/import.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <boost/graph/graphml.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "topology/registry.hpp"
#include "topology/routing.hpp"

namespace ultrasim {
namespace {

// The neutral description both formats are read into. `where` names the element for error messages
// ("nodes[3]", "edge 'e7' (n1 -- n2)").
struct NodeDesc {
  std::string where, name;
  NodeKind kind = NodeKind::kChip;
  std::optional<long> rank;
  int server = -1, rack = -1, domain = -1;
  double latency = 0;
};

struct LinkDesc {
  std::string where, a, b, tier = "link";
  double raw_bandwidth = 0, efficiency = 1, latency = 0;
  int lanes = 1;
};

struct Description {
  std::vector<std::string> tiers;  // empty: the order in which links first use them
  bool chip_forwarding = true;
  std::string multipath_default = "single";
  std::string stack;  // the software stack its runs use by default; empty: its generator's (ideal)
  std::vector<NodeDesc> nodes;
  std::vector<LinkDesc> links;
  std::optional<TopologyOrigin> origin;
  // The switch parameters the file records (switch_reduction etc.), as text; `records_parameters`: the
  // file has a parameter list (an export), so a switch parameter it lacks is one its generator lacked.
  std::map<std::string, std::string> switch_params;
  bool records_parameters = false;
};

const std::vector<std::string> kKinds{"chip", "switch"};

// Every error names the file, the element and what was expected.
class Errors {
 public:
  explicit Errors(std::string path) : path_(std::move(path)) {}
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(path_ + ": " + where + ": " + what);
  }
  // Runs a parser from units.hpp, naming the element and field if it throws.
  template <class F>
  auto parse(const std::string& where, const std::string& field, F&& parser) const {
    try {
      return parser();
    } catch (const InputError& e) {
      fail(where, field + ": " + e.what());
    }
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A whole number >= 0 written as text ("0", "17").
long parse_index(const Errors& errors, const std::string& where, const std::string& field,
                 const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    errors.fail(where, field + ": invalid value '" + text + "'; expected a whole number >= 0");
  return std::stol(text);
}

// ---- JSON -------------------------------------------------------------------------------------------

using Json = nlohmann::json;

void check_fields(const Errors& errors, const std::string& where, const Json& object,
                  const std::vector<std::string>& known) {
  if (!object.is_object()) errors.fail(where, "expected an object, got " + object.dump());
  for (const auto& [key, value] : object.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      errors.fail(where, unknown_name_message("field", key, known));
}

std::string json_string(const Errors& errors, const std::string& where, const Json& object,
                        const std::string& key) {
  const Json& value = object.at(key);
  if (!value.is_string()) errors.fail(where, key + ": expected a string, got " + value.dump());
  return value.get<std::string>();
}

// A quantity in base units: a JSON number, or a string with units ("100GBps", "500ns").
template <class Parser>
double json_quantity(const Errors& errors, const std::string& where, const Json& object,
                     const std::string& key, Parser parser, const std::string& expected) {
  const Json& value = object.at(key);
  if (value.is_string()) {
    std::string text = value.get<std::string>();
    return errors.parse(where, key, [&] { return parser(text); });
  }
  if (!value.is_number()) errors.fail(where, key + ": expected " + expected + ", got " + value.dump());
  return value.get<double>();
}

// A whole number in [0, 2^31): ranks, servers, racks and domains are ints.
long json_index(const Errors& errors, const std::string& where, const Json& object, const std::string& key) {
  const Json& value = object.at(key);
  if (!value.is_number_integer() || value.get<long>() < 0 || value.get<long>() > 0x7fffffffL)
    errors.fail(where, key + ": expected a whole number from 0 to 2147483647, got " + value.dump());
  return value.get<long>();
}

bool json_bool(const Errors& errors, const std::string& where, const Json& object, const std::string& key) {
  const Json& value = object.at(key);
  if (!value.is_boolean()) errors.fail(where, key + ": expected true or false, got " + value.dump());
  return value.get<bool>();
}

// The top-level object of `text`, its fields checked. Fields the exporter writes for readers (counts,
// summaries) are accepted and ignored.
Json read_json_top_level(const Errors& errors, const std::string& text) {
  Json top;
  try {
    top = parse_json_input(text, errors.path() + ": JSON");
  } catch (const Json::exception& e) {  // parse_error, or out_of_range for a number such as 1e400
    errors.fail("JSON", "not valid JSON: " + json_error_text(e));
  }
  check_fields(errors, "top level", top,
               {"schema_version", "spec", "chips", "switches", "tiers", "chip_forwarding",
                "multipath_default", "stack", "nodes", "links", "parameters", "per_tier", "diameter_links",
                "injection_Bps", "injection_raw_Bps", "bisection_Bps", "bisection_method"});
  if (top.contains("schema_version") && top["schema_version"] != 1)
    errors.fail("schema_version", "expected 1, got " + top["schema_version"].dump());
  return top;
}

// Into `d`: the generator spec and parameters the file came from, and the switch parameters it records
// (as text), from "spec" and "parameters".
void read_json_origin(const Errors& errors, const Json& top, Description& d) {
  if (top.contains("spec")) {
    d.origin = TopologyOrigin{json_string(errors, "spec", top, "spec")};
    if (top.contains("parameters")) {
      if (!top["parameters"].is_object()) errors.fail("parameters", "expected an object of name: value");
      d.origin->parameters = top["parameters"];
    }
  }
  if (!top.contains("parameters") || !top["parameters"].is_object()) return;
  d.records_parameters = true;
  for (const char* name : {"switch_reduction", "switch_reduce_bandwidth"}) {
    if (!top["parameters"].contains(name)) continue;
    const Json& v = top["parameters"][name];
    if (v.is_boolean())
      d.switch_params[name] = v.get<bool>() ? "true" : "false";
    else if (v.is_null())
      d.switch_params[name] = "inf";
    else if (v.is_number())
      d.switch_params[name] = shortest_number(v.get<double>());
    else if (v.is_string())
      d.switch_params[name] = v.get<std::string>();
    else
      errors.fail(std::string("parameters.") + name, "unexpected value " + v.dump());
  }
}

// The "tiers" array: distinct, non-empty tier names, lowest first.
std::vector<std::string> read_json_tiers(const Errors& errors, const Json& tiers) {
  if (!tiers.is_array()) errors.fail("tiers", "expected an array of tier names, lowest first");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    std::string where = "tiers[" + std::to_string(i) + "]";
    if (!tiers[i].is_string() || tiers[i].get<std::string>().empty())
      errors.fail(where, "expected a tier name, got " + tiers[i].dump());
    std::string name = tiers[i].get<std::string>();
    if (std::find(names.begin(), names.end(), name) != names.end())
      errors.fail(where, "tier '" + name + "' is listed twice");
    names.push_back(name);
  }
  return names;
}

// Node `n`, element `where` ("nodes[3]"): its fields checked and read.
NodeDesc read_json_node(const Errors& errors, std::string where, const Json& n) {
  check_fields(errors, where, n, {"id", "name", "kind", "rank", "server", "rack", "domain", "latency_s"});
  NodeDesc node;
  node.where = where;
  if (!n.contains("name")) errors.fail(where, "no name; links refer to nodes by name");
  node.name = json_string(errors, where, n, "name");
  where = node.where = where + " '" + node.name + "'";
  if (n.contains("kind")) {
    std::string kind = json_string(errors, where, n, "kind");
    if (kind != "chip" && kind != "switch") errors.fail(where, unknown_name_message("kind", kind, kKinds));
    node.kind = kind == "chip" ? NodeKind::kChip : NodeKind::kSwitch;
  }
  if (n.contains("rank")) node.rank = json_index(errors, where, n, "rank");
  if (n.contains("server")) node.server = static_cast<int>(json_index(errors, where, n, "server"));
  if (n.contains("rack")) node.rack = static_cast<int>(json_index(errors, where, n, "rack"));
  if (n.contains("domain")) node.domain = static_cast<int>(json_index(errors, where, n, "domain"));
  if (n.contains("latency_s"))
    node.latency = json_quantity(errors, where, n, "latency_s", parse_time, "seconds");
  return node;
}

// Link `l`'s raw rate per direction in bytes/s: raw_bandwidth_Bps (a number or a rate with units), or
// raw_bandwidth_GBps, the summary's figure (a plain number of GB/s, 1e9 B/s); both: they must agree.
double read_json_raw_bandwidth(const Errors& errors, const std::string& where, const Json& l) {
  auto gigabytes_per_s = [&]() {
    const Json& v = l["raw_bandwidth_GBps"];
    if (!v.is_number()) errors.fail(where, "raw_bandwidth_GBps: expected a number of GB/s, got " + v.dump());
    return v.get<double>() * 1e9;
  };
  if (l.contains("raw_bandwidth_Bps")) {
    double raw = json_quantity(errors, where, l, "raw_bandwidth_Bps", parse_rate, "bytes/s");
    if (l.contains("raw_bandwidth_GBps") &&  // both: the exact one wins, but they must agree
        std::abs(gigabytes_per_s() - raw) > 1e-9 * raw)
      errors.fail(where, "raw_bandwidth_Bps and raw_bandwidth_GBps disagree; give one of them");
    return raw;
  }
  if (l.contains("raw_bandwidth_GBps")) return gigabytes_per_s();
  errors.fail(where, "no raw_bandwidth_Bps; expected the raw rate per direction in bytes/s");
}

// Link `l`, element `where` ("links[7]"): its fields checked and read.
LinkDesc read_json_link(const Errors& errors, std::string where, const Json& l) {
  check_fields(errors, where, l,
               {"name", "a", "b", "tier", "raw_bandwidth_Bps", "raw_bandwidth_GBps", "efficiency",
                "bandwidth_GBps", "latency_s", "lanes"});
  LinkDesc link;
  for (const char* end : {"a", "b"})
    if (!l.contains(end)) errors.fail(where, std::string("no '") + end + "'; expected the name of a node");
  link.a = json_string(errors, where, l, "a");
  link.b = json_string(errors, where, l, "b");
  where = link.where = where + " (" + link.a + " -- " + link.b + ")";
  if (l.contains("tier")) link.tier = json_string(errors, where, l, "tier");
  link.raw_bandwidth = read_json_raw_bandwidth(errors, where, l);
  if (l.contains("efficiency"))
    link.efficiency = json_quantity(errors, where, l, "efficiency", parse_ratio, "a ratio in (0, 1]");
  if (l.contains("latency_s"))
    link.latency = json_quantity(errors, where, l, "latency_s", parse_time, "seconds");
  if (l.contains("lanes")) {
    long lanes = json_index(errors, where, l, "lanes");
    if (lanes < 1 || lanes > 1 << 20) errors.fail(where, "lanes: expected a whole number >= 1");
    link.lanes = static_cast<int>(lanes);
  }
  return link;
}

Description read_json(const Errors& errors, const std::string& text) {
  const Json top = read_json_top_level(errors, text);
  Description d;
  read_json_origin(errors, top, d);
  if (top.contains("tiers")) d.tiers = read_json_tiers(errors, top["tiers"]);
  if (top.contains("chip_forwarding"))
    d.chip_forwarding = json_bool(errors, "chip_forwarding", top, "chip_forwarding");
  if (top.contains("multipath_default"))
    d.multipath_default = json_string(errors, "multipath_default", top, "multipath_default");
  if (top.contains("stack")) d.stack = json_string(errors, "stack", top, "stack");

  if (!top.contains("nodes") || !top["nodes"].is_array())
    errors.fail("nodes", "expected an array of nodes ({\"name\": ..., \"kind\": \"chip\" or \"switch\"})");
  const Json& nodes = top["nodes"];
  for (std::size_t i = 0; i < nodes.size(); ++i)
    d.nodes.push_back(read_json_node(errors, "nodes[" + std::to_string(i) + "]", nodes[i]));

  if (top.contains("links") && !top["links"].is_array()) errors.fail("links", "expected an array of links");
  const Json links = top.value("links", Json::array());
  for (std::size_t i = 0; i < links.size(); ++i)
    d.links.push_back(read_json_link(errors, "links[" + std::to_string(i) + "]", links[i]));
  return d;
}

// ---- GraphML ----------------------------------------------------------------------------------------

// read_graphml's target: records every data value as the text written in the file, whatever type its
// key declares, so that rates and times may carry units ("100GBps") and unknown keys are harmless.
class TextGraph : public boost::mutate_graph {
 public:
  using Data = std::map<std::string, std::string>;
  std::vector<Data> nodes, edges;
  std::vector<std::pair<std::size_t, std::size_t>> ends;
  Data graph;

  bool is_directed() const override { return false; }
  boost::any do_add_vertex() override {
    nodes.emplace_back();
    return boost::any(nodes.size() - 1);
  }
  std::pair<boost::any, bool> do_add_edge(boost::any source, boost::any target) override {
    ends.emplace_back(boost::any_cast<std::size_t>(source), boost::any_cast<std::size_t>(target));
    edges.emplace_back();
    return {boost::any(edges.size() - 1), true};
  }
  void set_graph_property(const std::string& name, const std::string& value, const std::string&) override {
    graph[name] = value;
  }
  void set_vertex_property(const std::string& name, boost::any v, const std::string& value,
                           const std::string&) override {
    nodes[boost::any_cast<std::size_t>(v)][name] = value;
  }
  void set_edge_property(const std::string& name, boost::any e, const std::string& value,
                         const std::string&) override {
    edges[boost::any_cast<std::size_t>(e)][name] = value;
  }
};

// What the property-tree pass learns of the first <graph>: its node ids in order (vertex i is the i-th
// <node>) and each edge's name for error messages, in order.
struct GraphmlOutline {
  std::vector<std::string> ids;
  std::vector<std::string> edge_where;
};

// The ids of `graph`'s <node> elements, in order: present, unique, and of nodes without nested graphs.
std::vector<std::string> graphml_node_ids(const Errors& errors, const boost::property_tree::ptree& graph) {
  std::vector<std::string> ids;
  std::set<std::string> known;
  for (const auto& [tag, child] : graph) {
    if (tag != "node") continue;
    std::string id = child.get<std::string>("<xmlattr>.id", "");
    std::string where = "node '" + id + "'";
    if (id.empty()) errors.fail("node #" + std::to_string(ids.size()), "no id attribute");
    if (!known.insert(id).second) errors.fail(where, "duplicate node id");
    if (child.count("graph")) errors.fail(where, "nested graphs are not supported");
    ids.push_back(id);
  }
  return ids;
}

// The names of `graph`'s <edge> elements ("edge 'e7' (n1 -- n2)"), in order, each end checked to be
// one of the node ids `ids`.
std::vector<std::string> graphml_edge_names(const Errors& errors, const boost::property_tree::ptree& graph,
                                            const std::vector<std::string>& ids) {
  const std::set<std::string> known(ids.begin(), ids.end());
  std::vector<std::string> edge_where;
  for (const auto& [tag, child] : graph) {
    if (tag != "edge") continue;
    std::string id = child.get<std::string>("<xmlattr>.id", "");
    std::string source = child.get<std::string>("<xmlattr>.source", "");
    std::string target = child.get<std::string>("<xmlattr>.target", "");
    std::string where = "edge " + (id.empty() ? "#" + std::to_string(edge_where.size()) : "'" + id + "'") +
                        " (" + source + " -- " + target + ")";
    for (const std::string& end : {source, target})
      if (!known.count(end))
        errors.fail(where, end.empty() ? std::string("no source or target attribute")
                                       : "unknown node '" + end + "'; expected the id of a <node>");
    edge_where.push_back(where);
  }
  return edge_where;
}

// read_graphml does not report node ids, and silently creates a node for an edge end it does not
// know; so first list the ids and check every edge's ends, reading `text` as a property tree.
GraphmlOutline graphml_outline(const Errors& errors, const std::string& text) {
  namespace pt = boost::property_tree;
  GraphmlOutline outline;
  try {
    pt::ptree tree;
    std::istringstream in(text);
    pt::read_xml(in, tree, pt::xml_parser::no_comments | pt::xml_parser::trim_whitespace);
    const pt::ptree* graph = nullptr;
    for (const auto& [tag, child] : tree.get_child("graphml"))
      if (tag == "graph") {
        graph = &child;
        break;
      }
    if (!graph) errors.fail("graphml", "no <graph> element");
    outline.ids = graphml_node_ids(errors, *graph);
    outline.edge_where = graphml_edge_names(errors, *graph, outline.ids);
  } catch (const pt::ptree_error& e) {
    errors.fail("GraphML", std::string("not valid GraphML: ") + e.what());
  }
  return outline;
}

// Into `g`: `text` read by read_graphml, which must find just the outline's nodes and edges.
void graphml_read_data(const Errors& errors, const std::string& text, const GraphmlOutline& outline,
                       TextGraph& g) {
  try {
    std::istringstream in(text);
    boost::read_graphml(in, g, 0);
  } catch (const boost::directed_graph_error&) {
    errors.fail("GraphML", "directed edges; links are full duplex: use <graph edgedefault=\"undirected\">");
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    errors.fail("GraphML", std::string("not valid GraphML: ") + e.what());
  }
  if (g.nodes.size() != outline.ids.size() || g.edges.size() != outline.edge_where.size())
    errors.fail("GraphML", "nodes or edges outside the first <graph> are not supported");
}

// The value of data key `key`, or null if the element has none.
const std::string* graphml_value(const TextGraph::Data& data, const std::string& key) {
  auto it = data.find(key);
  return it == data.end() ? nullptr : &it->second;
}

// Into `d`: the graph's own data (chip_forwarding, multipath_default, tiers, switch parameters).
void graphml_graph_data(const Errors& errors, const TextGraph::Data& graph, Description& d) {
  const std::string where_graph = "graph";
  if (auto* v = graphml_value(graph, "chip_forwarding"))
    d.chip_forwarding = errors.parse(where_graph, "chip_forwarding", [&] { return parse_bool(*v); });
  if (auto* v = graphml_value(graph, "multipath_default")) d.multipath_default = *v;
  if (auto* v = graphml_value(graph, "tiers")) {
    std::stringstream in(*v);
    for (std::string tier; std::getline(in, tier, ',');) {
      tier.erase(0, tier.find_first_not_of(' '));
      tier.erase(tier.find_last_not_of(' ') + 1);
      if (tier.empty())
        errors.fail(where_graph, "tiers: expected tier names separated by commas, lowest first");
      if (std::find(d.tiers.begin(), d.tiers.end(), tier) != d.tiers.end())
        errors.fail(where_graph, "tiers: tier '" + tier + "' is listed twice");
      d.tiers.push_back(tier);
    }
  }
  for (const char* name : {"switch_reduction", "switch_reduce_bandwidth"})
    if (auto* v = graphml_value(graph, name)) d.switch_params[name] = *v;
}

// The node with id `id` and data `data`.
NodeDesc graphml_node(const Errors& errors, const std::string& id, const TextGraph::Data& data) {
  NodeDesc node;
  node.where = "node '" + id + "'";
  node.name = id;
  if (auto* v = graphml_value(data, "kind")) {
    if (*v != "chip" && *v != "switch") errors.fail(node.where, unknown_name_message("kind", *v, kKinds));
    node.kind = *v == "chip" ? NodeKind::kChip : NodeKind::kSwitch;
  }
  if (auto* v = graphml_value(data, "rank")) node.rank = parse_index(errors, node.where, "rank", *v);
  if (auto* v = graphml_value(data, "server"))
    node.server = static_cast<int>(parse_index(errors, node.where, "server", *v));
  if (auto* v = graphml_value(data, "rack"))
    node.rack = static_cast<int>(parse_index(errors, node.where, "rack", *v));
  if (auto* v = graphml_value(data, "latency"))
    node.latency = errors.parse(node.where, "latency", [&] { return parse_time(*v); });
  return node;
}

// The link named `where` between nodes `a` and `b`, with data `data`.
LinkDesc graphml_link(const Errors& errors, const std::string& where, const std::string& a,
                      const std::string& b, const TextGraph::Data& data) {
  LinkDesc link;
  link.where = where;
  link.a = a;
  link.b = b;
  if (auto* v = graphml_value(data, "tier")) link.tier = *v;
  auto* bandwidth = graphml_value(data, "bandwidth");
  if (!bandwidth) errors.fail(link.where, "no bandwidth; expected a raw rate per direction such as 100GBps");
  link.raw_bandwidth = errors.parse(link.where, "bandwidth", [&] { return parse_rate(*bandwidth); });
  if (auto* v = graphml_value(data, "efficiency"))
    link.efficiency = errors.parse(link.where, "efficiency", [&] { return parse_ratio(*v); });
  if (auto* v = graphml_value(data, "latency"))
    link.latency = errors.parse(link.where, "latency", [&] { return parse_time(*v); });
  if (auto* v = graphml_value(data, "lanes"))
    link.lanes = static_cast<int>(errors.parse(link.where, "lanes", [&] { return parse_count(*v); }));
  return link;
}

Description read_graphml_text(const Errors& errors, const std::string& text) {
  check_xml_depth(text, errors.path());
  const GraphmlOutline outline = graphml_outline(errors, text);
  TextGraph g;
  graphml_read_data(errors, text, outline, g);
  Description d;
  graphml_graph_data(errors, g.graph, d);
  for (std::size_t i = 0; i < outline.ids.size(); ++i)
    d.nodes.push_back(graphml_node(errors, outline.ids[i], g.nodes[i]));
  for (std::size_t k = 0; k < g.edges.size(); ++k)
    d.links.push_back(graphml_link(errors, outline.edge_where[k], outline.ids[g.ends[k].first],
                                   outline.ids[g.ends[k].second], g.edges[k]));
  return d;
}

// ---- Both -------------------------------------------------------------------------------------------

std::string read_whole_file(const Errors& errors) {
  return read_input_file(errors.path(), "topology file '" + errors.path() + "'", "a JSON or GraphML file");
}

Description read_description(const std::string& path) {
  if (path.empty())
    throw InputError("file: needs a path, e.g. file:my_fabric.json (JSON as exported, or GraphML)");
  Errors errors(path);
  std::string text = read_whole_file(errors);
  auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return read_json(errors, text);
  if (first != std::string::npos && text[first] == '<') return read_graphml_text(errors, text);
  throw InputError(path +
                   ": neither JSON (an object) nor GraphML (XML); expected a file as written by "
                   "`ultrasim topology SPEC --format json`, or GraphML");
}

// ---- Building ---------------------------------------------------------------------------------------

// The nodes by name, and the chips' positions in the file, in order.
struct ImportNodeIndex {
  std::map<std::string, std::size_t> by_name;
  std::vector<std::size_t> chips;
};

// Indexes the nodes, checking that names are present and unique, that only switches have a latency
// and only chips a rank.
ImportNodeIndex import_index_nodes(const Errors& errors, const Description& d) {
  ImportNodeIndex index;
  for (std::size_t i = 0; i < d.nodes.size(); ++i) {
    const NodeDesc& n = d.nodes[i];
    if (n.name.empty()) errors.fail(n.where, "empty name");
    auto [it, fresh] = index.by_name.emplace(n.name, i);
    if (!fresh)
      errors.fail(n.where, "duplicate name '" + n.name + "' (also " + d.nodes[it->second].where + ")");
    if (n.kind == NodeKind::kChip) {
      index.chips.push_back(i);
      if (n.latency != 0)
        errors.fail(n.where, "latency applies to switches; a chip's links carry its latency");
    } else if (n.rank) {
      errors.fail(n.where, "a switch has no rank; ranks number the chips");
    }
  }
  return index;
}

// chip_of_rank[k]: the position in the file of the chip of rank k. Chips carry ranks 0..p-1, each once,
// given for every chip or for none (then the order of the chips in the file).
std::vector<std::size_t> import_rank_chips(const Errors& errors, const Description& d,
                                           const std::vector<std::size_t>& chips) {
  const long p = static_cast<long>(chips.size());
  long ranked =
      std::count_if(chips.begin(), chips.end(), [&](std::size_t i) { return d.nodes[i].rank.has_value(); });
  std::vector<std::size_t> chip_of_rank(p, d.nodes.size());
  for (long k = 0; k < p; ++k) {
    const NodeDesc& n = d.nodes[chips[k]];
    if (ranked != 0 && !n.rank)
      errors.fail(n.where, "no rank while other chips have one; give every chip a rank, or none");
    long rank = ranked ? *n.rank : k;
    if (rank >= p)
      errors.fail(n.where, "rank " + std::to_string(rank) + " is out of range; expected 0.." +
                               std::to_string(p - 1) + " (the file has " + std::to_string(p) + " chips)");
    if (chip_of_rank[rank] != d.nodes.size())
      errors.fail(n.where, "duplicate rank " + std::to_string(rank) + " (also " +
                               d.nodes[chip_of_rank[rank]].where + ")");
    chip_of_rank[rank] = chips[k];
  }
  return chip_of_rank;
}

// Chips are named chip<rank> in ultrasim (ranks 0..p-1); checks that no switch takes such a name.
void import_check_switch_names(const Errors& errors, const Description& d, long p) {
  for (const NodeDesc& n : d.nodes) {
    if (n.kind != NodeKind::kSwitch || n.name.rfind("chip", 0) != 0) continue;
    std::string digits = n.name.substr(4);
    if (!digits.empty() && digits.size() < 9 && digits.find_first_not_of("0123456789") == std::string::npos &&
        std::stol(digits) < p)
      errors.fail(n.where, "a switch may not be named like a chip (chips are named chip<rank>)");
  }
}

// The topology's tiers: the file's list (every link's tier must be on it), else the order in which the
// links first use them, else just "link".
std::vector<std::string> import_tiers(const Errors& errors, const Description& d) {
  std::vector<std::string> tiers = d.tiers;
  for (const LinkDesc& l : d.links) {
    if (l.tier.empty()) errors.fail(l.where, "empty tier name");
    if (std::find(tiers.begin(), tiers.end(), l.tier) != tiers.end()) continue;
    if (!d.tiers.empty())
      errors.fail(l.where, unknown_name_message("tier", l.tier, d.tiers) + " (from \"tiers\")");
    tiers.push_back(l.tier);
  }
  if (tiers.empty()) tiers.push_back("link");
  return tiers;
}

// Adds the nodes to `t` in file order, the k-th chip position holding the chip of rank k (the same node
// when the file lists chips by rank, as exports do); returns each node's vertex.
std::vector<Vertex> import_add_nodes(const Errors& errors, const Description& d,
                                     const std::vector<std::size_t>& chip_of_rank, Topology& t) {
  std::vector<Vertex> vertex_of(d.nodes.size());
  long next_rank = 0;
  for (std::size_t i = 0; i < d.nodes.size(); ++i) {
    const NodeDesc& n = d.nodes[i];
    if (n.kind == NodeKind::kSwitch) {
      if (n.latency < 0) errors.fail(n.where, "latency must be >= 0");
      vertex_of[i] = t.add_switch(n.name, n.latency);
    } else {
      std::size_t c = chip_of_rank[next_rank++];
      vertex_of[c] = t.add_chip(d.nodes[c].server, d.nodes[c].rack, d.nodes[c].domain);
    }
  }
  return vertex_of;
}

// Adds the links to `t` in file order between the nodes' vertices, naming the link in any error.
void import_add_links(const Errors& errors, const Description& d, const ImportNodeIndex& index,
                      const std::vector<Vertex>& vertex_of, Topology& t) {
  for (const LinkDesc& l : d.links) {
    for (const std::string& end : {l.a, l.b})
      if (!index.by_name.count(end))
        errors.fail(l.where, "unknown node '" + end + "'; expected the name of a node");
    try {
      t.add_link(vertex_of[index.by_name.at(l.a)], vertex_of[index.by_name.at(l.b)], l.tier, l.raw_bandwidth,
                 l.latency, l.efficiency, l.lanes);
    } catch (const InputError& e) {
      errors.fail(l.where, e.what());
    }
  }
}

}  // namespace

std::vector<ParamSpec> imported_topology_params(const std::string& path) {
  Description d;
  if (!path.empty()) d = read_description(path);
  const std::string source = "the file's own value, else a generic switch's";
  std::vector<ParamSpec> generic{
      switch_reduction_param("switches can reduce and multicast (switch-reduce)", source),
      switch_reduce_bandwidth_param("rate of a switch's reduction engine", source),
  };
  // An export declares what its generator declared, no more (so that it exports again unchanged);
  // a file without a parameter list gets the generic switch's.
  std::vector<ParamSpec> specs;
  for (ParamSpec spec : generic) {
    auto it = d.switch_params.find(spec.name);
    if (it != d.switch_params.end()) spec.default_value = it->second;
    if (it != d.switch_params.end() || !d.records_parameters) specs.push_back(spec);
  }
  try {
    ParamSet check(specs);
  } catch (const InputError& e) {
    throw InputError(path + ": parameters: " + e.what());
  }
  return specs;
}

Topology import_topology(const std::string& path, const std::string& spec, const ParamSet& params) {
  Description d = read_description(path);
  Errors errors(path);
  if (std::find(multipath_names().begin(), multipath_names().end(), d.multipath_default) ==
      multipath_names().end())
    errors.fail("multipath_default", unknown_name_message("policy", d.multipath_default, multipath_names()));
  ImportNodeIndex index = import_index_nodes(errors, d);
  const long p = static_cast<long>(index.chips.size());
  if (p > kMaxTopologyChips)
    errors.fail("nodes", "more than " + shortest_number(kMaxTopologyChips) + " chips");
  const std::vector<std::size_t> chip_of_rank = import_rank_chips(errors, d, index.chips);
  import_check_switch_names(errors, d, p);

  Topology t(spec, params, import_tiers(errors, d));
  t.set_chip_forwarding(d.chip_forwarding);
  t.set_multipath_default(d.multipath_default);
  if (!d.stack.empty()) t.set_default_stack(d.stack);
  if (d.origin) t.set_origin(*d.origin);
  const std::vector<Vertex> vertex_of = import_add_nodes(errors, d, chip_of_rank, t);
  import_add_links(errors, d, index, vertex_of, t);
  return t;
}

}  // namespace ultrasim
