#include "topology/routing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <utility>

#include <boost/container/small_vector.hpp>

#include "topology/base/errors.hpp"
#include "topology/base/mix.hpp"
#include "topology/base/suggest.hpp"

namespace ultrasim {
namespace routing_labels {  // named, not anonymous: Routes::Search holds labels

// A route's cost, compared lexicographically: latency (equal within a relative 1e-9, so that sums of
// the same latencies in another order tie), hops, then the tiers crossed in order.
struct Label {
  double latency = std::numeric_limits<double>::infinity();
  int hops = 0;
  boost::container::small_vector<int, 8> tiers;  // inline up to 8 hops: no allocation per label
};

bool better(const Label& x, const Label& y) {
  if (std::isinf(x.latency) || std::isinf(y.latency)) return x.latency < y.latency;
  double tolerance = 1e-9 * std::max(std::abs(x.latency), std::abs(y.latency));
  if (std::abs(x.latency - y.latency) > tolerance) return x.latency < y.latency;
  if (x.hops != y.hops) return x.hops < y.hops;
  return x.tiers < y.tiers;
}

}  // namespace routing_labels

using routing_labels::better;
using routing_labels::Label;

namespace {

Path finish_path(const Topology& topology, std::vector<Vertex> vertices, std::vector<Hop> hops) {
  Path path;
  path.vertices = std::move(vertices);
  path.hops = std::move(hops);
  path.bandwidth = std::numeric_limits<double>::infinity();
  for (const Hop& hop : path.hops) {
    const Link& link = topology.links()[hop.link];
    path.latency += link.latency;
    path.bandwidth = std::min(path.bandwidth, link.bandwidth());
  }
  for (std::size_t i = 1; i + 1 < path.vertices.size(); ++i)
    if (topology.node(path.vertices[i]).kind == NodeKind::kSwitch)
      path.latency += topology.node(path.vertices[i]).latency;
  return path;
}

}  // namespace

Path path_through(const Topology& topology, const std::vector<Vertex>& vertices) {
  std::vector<Hop> hops;
  const Graph& g = topology.graph();
  for (std::size_t i = 0; i + 1 < vertices.size(); ++i) {
    auto [e, found] = boost::edge(vertices[i], vertices[i + 1], g);
    if (!found)
      throw InputError("no link between " + g[vertices[i]].name + " and " + g[vertices[i + 1]].name);
    const Link& link = topology.link(e);
    hops.push_back(Hop{link.index, link.a == vertices[i]});
  }
  return finish_path(topology, vertices, std::move(hops));
}

const std::vector<std::string>& multipath_names() {
  static const std::vector<std::string> kNames{"single", "stripe", "hash"};
  return kNames;
}

const ParamTable<RoutingParams>& routing_table() {
  static const ParamTable<RoutingParams> table =
      ParamTable<RoutingParams>{}
          .add_optional({"multipath", "auto", Unit::kChoice,
                         "how a message uses its equal-cost paths: single (the route), stripe (all, bytes in "
                         "proportion to bandwidth), hash (one per chip pair); auto: the topology's default",
                         "NVLink sprays over NVSwitch planes (stripe); ECMP hashes flows (hash)",
                         [] {
                           std::vector<std::string> choices{"auto"};
                           for (const std::string& name : multipath_names()) choices.push_back(name);
                           return choices;
                         }()},
                        &RoutingParams::multipath)
          .add_optional({"max_paths", std::to_string(kDefaultMaxPaths), Unit::kCount,
                         "most equal-cost paths kept per chip pair (the route first)",
                         "assumption: covers 18 NVSwitch planes and 2D/3D torus minimal paths"},
                        &RoutingParams::max_paths);
  return table;
}

Multipath multipath_policy(const Topology& topology) {
  std::string word = routing_table().read(topology.params()).multipath;
  if (word == "auto") word = topology.multipath_default();
  const auto& names = multipath_names();
  for (std::size_t k = 0; k < names.size(); ++k)
    if (names[k] == word) return static_cast<Multipath>(k);
  std::vector<std::string> known{"auto"};
  known.insert(known.end(), names.begin(), names.end());
  throw InputError(unknown_name_message("multipath policy", word, known) + " (on " + topology.spec() + ")");
}

const char* multipath_name(Multipath policy) {
  return multipath_names().at(static_cast<std::size_t>(policy)).c_str();
}

std::vector<std::uint64_t> split_bytes(std::uint64_t bytes, const std::vector<double>& weights) {
  std::vector<std::uint64_t> parts(weights.size(), 0);
  if (weights.empty()) return parts;
  double total = 0;
  for (double w : weights) total += w;
  std::uint64_t given = 0;
  std::vector<std::pair<double, std::size_t>> remainders;  // (fraction left over, part)
  for (std::size_t k = 0; k < weights.size(); ++k) {
    long double exact = static_cast<long double>(bytes) * weights[k] / total;
    parts[k] = std::min<std::uint64_t>(static_cast<std::uint64_t>(std::floor(exact)), bytes - given);
    given += parts[k];
    remainders.emplace_back(static_cast<double>(exact - static_cast<long double>(parts[k])), k);
  }
  // Largest remainders first; equal ones to the earlier part (so equal weights cut like even_chunks).
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  for (std::size_t i = 0; given < bytes; i = (i + 1) % remainders.size(), ++given)
    ++parts[remainders[i].second];
  return parts;
}

int hashed_path(int a, int b, int count) {
  const std::uint64_t z = splitmix64(pair_key(static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b)));
  return static_cast<int>(z % static_cast<std::uint64_t>(count));
}

// The scratch state of one label-setting search, reset in time proportional to what it touched.
struct Routes::Search {
  Tree tree;
  std::vector<Label> label;
  std::vector<std::uint32_t> version;
  std::vector<Vertex> touched;  // vertices whose entries may differ from the defaults
  std::vector<Label> pushed;    // the labels entries were pushed with, kept for their storage
  explicit Search(std::size_t n) : label(n), version(n, 0) {
    tree.parent_link.assign(n, -1);
    tree.parent.assign(n, 0);
    tree.reached.assign(n, 0);
    tree.latency.assign(n, 0.0);
    tree.hops.assign(n, 0);
  }
  void reset() {
    for (Vertex v : touched) {
      tree.parent_link[v] = -1;
      tree.parent[v] = 0;
      tree.reached[v] = 0;
      tree.latency[v] = 0;
      tree.hops[v] = 0;
      label[v] = Label{};
      version[v] = 0;
    }
    touched.clear();
    pushed.clear();
    tree.ties.clear();
  }
};

Routes::Routes(const Topology& topology, std::vector<char> down)
    : topology_(topology),
      down_(std::move(down)),
      policy_(multipath_policy(topology)),
      max_paths_(routing_table().read(topology.params()).max_paths),
      trees_(boost::num_vertices(topology.graph())),
      searched_(boost::num_vertices(topology.graph()), 0),
      messages_(topology.chip_count()) {}

Routes::~Routes() = default;

const Routes::Tree& Routes::tree(Vertex from) const {
  if (!trees_[from]) {
    search(from, Stop::kWhole);
    trees_[from] = std::make_unique<Tree>(search_->tree);
  }
  return *trees_[from];
}

const Routes::Tree& Routes::tree_to(Vertex from, Vertex to) const {
  // Targeted searches from one source stop early; once they have touched as many vertices as the graph
  // has, the whole tree (one more search, kept) is cheaper than going on: at most twice its work where
  // every pair is routed. A search that touches much of the graph need not be near its end (a rail
  // switch labels a chip of every node, and popping them all is the work), so none goes on by itself.
  if (trees_[from] || searched_[from] >= boost::num_vertices(topology_.graph())) return tree(from);
  search(from, Stop::kAtTarget, to);
  searched_[from] += search_->touched.size();
  return search_->tree;
}

// Label-setting search. The frontier pops the smallest (label, vertex), exact ties broken by vertex id,
// so results are deterministic; an entry superseded by a better label for its vertex is skipped. A vertex
// that relays nothing (a chip that does not forward) never enters the frontier: it only collects its best
// label and ties, which are final once every relay is done (a relay popped after it could only offer a
// route with more hops), so the frontier holds switches and forwarding chips only.
// With a target, the search stops once the frontier's best is no better than the target's label: every
// later pop offers only worse routes, so the target's route, its ties and every vertex they cross are
// final, and the pops so far are the whole search's first ones. Looking for the nearest chip, it stops
// once the frontier's latency is over the least chip latency labelled so far by more than the labels'
// tolerance allows a later route to tie or undercut it: the least latency is then the whole tree's.
double Routes::search(Vertex from, Stop stop, Vertex to) const {
  const Graph& g = topology_.graph();
  const std::size_t n = boost::num_vertices(g);
  if (!search_) search_ = std::make_unique<Search>(n);
  Search& st = *search_;
  st.reset();
  Tree* tree = &st.tree;
  std::vector<Label>& label = st.label;
  std::vector<std::uint32_t>& version = st.version;
  auto touch = [&st](Vertex v) { st.touched.push_back(v); };
  touch(from);
  label[from].latency = 0;
  struct Entry {
    std::uint32_t label;  // its label when pushed, in `pushed` (small entries: the heap moves them a lot)
    std::uint32_t version;
    Vertex v;
  };
  std::vector<Label>& pushed = st.pushed;
  auto after = [&pushed](const Entry& x, const Entry& y) {  // the heap's order: x pops after y
    if (better(pushed[y.label], pushed[x.label])) return true;
    if (better(pushed[x.label], pushed[y.label])) return false;
    return y.v < x.v;
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(after)> frontier(after);
  auto relays = [&](Vertex v) {
    return v == from || g[v].kind == NodeKind::kSwitch || topology_.chip_forwarding();
  };
  auto push = [&](Vertex v, std::uint32_t version) {
    pushed.push_back(label[v]);
    frontier.push(Entry{static_cast<std::uint32_t>(pushed.size() - 1), version, v});
  };
  push(from, 0);
  auto is_chip = [&](Vertex v) { return v != from && g[v].kind == NodeKind::kChip && g[v].rank >= 0; };
  double nearest = std::numeric_limits<double>::infinity();  // least chip latency labelled so far
  while (!frontier.empty()) {
    const Label& top = pushed[frontier.top().label];
    if (stop == Stop::kAtTarget && !better(top, label[to])) break;
    if (stop == Stop::kNearestChip && top.latency > nearest * (1 + 1e-8)) break;
    const Vertex u = frontier.top().v;
    const bool stale = tree->reached[u] || frontier.top().version != version[u];
    frontier.pop();
    if (stale) continue;
    tree->reached[u] = 1;
    tree->latency[u] = label[u].latency;
    tree->hops[u] = label[u].hops;
    if (!relays(u)) continue;
    for (auto [e, end] = boost::out_edges(u, g); e != end; ++e) {
      Vertex v = boost::target(*e, g);
      if (tree->reached[v]) continue;
      const Link& link = topology_.link(*e);
      if (link_down(link.index)) continue;
      Label candidate{label[u].latency + link.latency + (u != from ? g[u].latency : 0.0), label[u].hops + 1,
                      label[u].tiers};
      candidate.tiers.push_back(link.tier_index);
      // Among parallel links, the first added wins (strictly better only).
      if (better(candidate, label[v])) {
        if (std::isinf(label[v].latency)) touch(v);
        label[v] = std::move(candidate);
        if (is_chip(v)) nearest = std::min(nearest, label[v].latency);
        tree->parent[v] = u;
        tree->parent_link[v] = link.index;
        tree->ties.erase(v);
        if (relays(v)) push(v, ++version[v]);
      } else if (!better(label[v], candidate)) {
        // An equal-cost route through another vertex (a parallel link from u is the same hop).
        auto tied = tree->ties.find(v);
        if ((tied == tree->ties.end() ? tree->parent[v] : tied->second.back().first) != u)
          tree->ties[v].emplace_back(u, link.index);
      }
    }
  }
  return settle(from, stop, to);
}

double Routes::settle(Vertex from, Stop stop, Vertex to) const {
  Search& st = *search_;
  const Graph& g = topology_.graph();
  if (stop == Stop::kNearestChip) {  // the labels now final: some may have moved up within the tolerance
    double nearest = std::numeric_limits<double>::infinity();
    for (Vertex v : st.touched)
      if (v != from && g[v].kind == NodeKind::kChip && g[v].rank >= 0)
        nearest = std::min(nearest, st.label[v].latency);
    return nearest;
  }
  // Vertices that relay nothing are settled now: every of them (the whole tree), or the target.
  for (Vertex v : stop == Stop::kAtTarget ? std::vector<Vertex>{to} : st.touched)
    if (!st.tree.reached[v] && !std::isinf(st.label[v].latency)) {
      st.tree.reached[v] = 1;
      st.tree.latency[v] = st.label[v].latency;
      st.tree.hops[v] = st.label[v].hops;
    }
  return std::numeric_limits<double>::infinity();
}

std::optional<Path> Routes::find(Vertex from, Vertex to) const {
  const Tree& t = tree_to(from, to);
  if (!t.reached[to]) return std::nullopt;
  std::vector<Vertex> vertices{to};
  std::vector<Hop> hops;
  for (Vertex v = to; v != from; v = t.parent[v]) {
    const Link& link = topology_.links()[t.parent_link[v]];
    hops.push_back(Hop{link.index, link.a == t.parent[v]});
    vertices.push_back(t.parent[v]);
  }
  std::reverse(vertices.begin(), vertices.end());
  std::reverse(hops.begin(), hops.end());
  return finish_path(topology_, std::move(vertices), std::move(hops));
}

Path Routes::between(int src_rank, int dst_rank) const {
  std::optional<Path> path = find(topology_.chip(src_rank), topology_.chip(dst_rank));
  if (!path)
    throw SimulationError("chip" + std::to_string(dst_rank) + " is unreachable from chip" +
                          std::to_string(src_rank) + " on " + topology_.spec() +
                          (topology_.chip_forwarding() ? "" : " (chip_forwarding is off)"));
  return *path;
}

std::vector<Path> Routes::equal_paths(Vertex from, Vertex to) const {
  const Tree& t = tree_to(from, to);
  std::vector<Path> out;
  if (!t.reached[to]) return out;
  // Depth-first from `to` back to `from` over the tie predecessors, first predecessor first: the
  // first path found is the route itself. Every predecessor chain reaches `from`, so no dead ends.
  std::vector<Vertex> vertices{to};
  std::vector<Hop> hops;
  auto walk = [&](auto& self, Vertex v) -> void {
    if (v == from) {
      out.push_back(finish_path(topology_, std::vector<Vertex>(vertices.rbegin(), vertices.rend()),
                                std::vector<Hop>(hops.rbegin(), hops.rend())));
      return;
    }
    std::vector<std::pair<Vertex, int>> preds{{t.parent[v], t.parent_link[v]}};
    if (auto tied = t.ties.find(v); tied != t.ties.end())
      preds.insert(preds.end(), tied->second.begin(), tied->second.end());
    for (auto [u, l] : preds) {
      vertices.push_back(u);
      hops.push_back(Hop{l, topology_.links()[l].a == u});
      self(self, u);
      vertices.pop_back();
      hops.pop_back();
      if (static_cast<int>(out.size()) >= max_paths_) return;
    }
  };
  walk(walk, to);
  return out;
}

std::unique_ptr<std::vector<PathShare>>& Routes::message_slot(int src_rank, int dst_rank) const {
  Destinations& d = messages_.at(src_rank);
  if (!d.indexed.empty()) return d.indexed[dst_rank];
  for (auto& [dst, shares] : d.listed)
    if (dst == dst_rank) return shares;
  if (d.listed.size() < kListedPairs) return d.listed.emplace_back(dst_rank, nullptr).second;
  d.indexed.resize(topology_.chip_count());  // a source that sends to many: index its destinations
  for (auto& [dst, shares] : d.listed) d.indexed[dst] = std::move(shares);
  d.listed.clear();
  return d.indexed[dst_rank];
}

const std::vector<PathShare>& Routes::message_paths(int src_rank, int dst_rank) const {
  std::unique_ptr<std::vector<PathShare>>& cached = message_slot(src_rank, dst_rank);
  if (cached) return *cached;
  std::vector<PathShare> shares;
  if (policy_ == Multipath::kSingle || src_rank == dst_rank) {
    shares.push_back(PathShare{0, between(src_rank, dst_rank), 1.0});
  } else {
    std::vector<Path> paths = equal_paths(topology_.chip(src_rank), topology_.chip(dst_rank));
    if (paths.empty()) between(src_rank, dst_rank);  // throws, naming the pair
    if (policy_ == Multipath::kHash) {
      // Hashed on the fabric's ranks, so a pair takes the same path in a part of the fabric (SPEC@CHIPS).
      int k = hashed_path(topology_.fabric_rank(src_rank), topology_.fabric_rank(dst_rank),
                          static_cast<int>(paths.size()));
      shares.push_back(PathShare{k, std::move(paths[k]), 1.0});
    } else {
      double total = 0;
      for (const Path& path : paths) total += path.bandwidth;
      for (std::size_t k = 0; k < paths.size(); ++k)
        shares.push_back(PathShare{static_cast<int>(k), paths[k], paths[k].bandwidth / total});
    }
  }
  cached = std::make_unique<std::vector<PathShare>>(std::move(shares));
  return *cached;
}

double Routes::route_latency(int src_rank, int dst_rank) const {
  // The hashed path ties with the route on latency, but is summed over other links: take the route's own.
  if (policy_ == Multipath::kHash) return between(src_rank, dst_rank).latency;
  return message_paths(src_rank, dst_rank).front().path.latency;  // the route, cached
}

std::vector<std::uint64_t> Routes::message_parts(int src_rank, int dst_rank, std::uint64_t bytes) const {
  const auto& shares = message_paths(src_rank, dst_rank);
  if (shares.size() == 1) return {bytes};
  std::vector<double> weights;
  for (const PathShare& share : shares) weights.push_back(share.weight);
  return split_bytes(bytes, weights);
}

double Routes::message_bandwidth(int src_rank, int dst_rank) const {
  const auto& shares = message_paths(src_rank, dst_rank);
  if (shares.size() == 1) return shares.front().path.bandwidth;
  // Seconds per byte of the message on each link direction it loads; the busiest one sets the rate.
  std::map<std::pair<int, bool>, double> load;
  for (const PathShare& share : shares)
    for (const Hop& hop : share.path.hops)
      load[{hop.link, hop.up}] += share.weight / topology_.links()[hop.link].bandwidth();
  double busiest = 0;
  for (const auto& [hop, seconds] : load) busiest = std::max(busiest, seconds);
  return 1.0 / busiest;
}

std::vector<int> Routes::source_chips() const {
  std::vector<int> sources = down_.empty() ? topology_.route_sources() : std::vector<int>{};
  if (sources.empty())
    for (int r = 0; r < topology_.chip_count(); ++r) sources.push_back(r);
  return sources;
}

double Routes::min_chip_latency() const {
  int p = topology_.chip_count();
  if (p < 2) return 0;
  double best = std::numeric_limits<double>::infinity();
  for (int a : source_chips()) {
    const Vertex from = topology_.chip(a);
    if (!trees_[from]) {  // a search stopped at the nearest chip, unless the whole tree is at hand
      best = std::min(best, search(from, Stop::kNearestChip));
      continue;
    }
    for (int b = 0; b < p; ++b)
      if (a != b && trees_[from]->reached[topology_.chip(b)])
        best = std::min(best, trees_[from]->latency[topology_.chip(b)]);
  }
  return best;
}

int Routes::diameter() const {
  int p = topology_.chip_count(), longest = 0;
  for (int a : source_chips()) {
    const Tree& t = tree(topology_.chip(a));
    for (int b = 0; b < p; ++b)
      if (a != b) {
        if (!t.reached[topology_.chip(b)]) between(a, b);  // throws, naming the pair
        longest = std::max(longest, t.hops[topology_.chip(b)]);
      }
  }
  return longest;
}

}  // namespace ultrasim
