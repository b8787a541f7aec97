#include "sim/analysis/link_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>
#include <sstream>

#include <boost/container/small_vector.hpp>

#include "topology/base/units.hpp"

namespace ultrasim {

const std::vector<Hop> RecordPaths::kNoHops;

void StepSeries::add(double at, double v) {
  if (!value.empty() && value.back() == v) return;
  if (!t.empty() && t.back() == at) {  // two changes at one instant: the later one holds
    value.back() = v;
    if (value.size() >= 2 && value[value.size() - 2] == v) t.pop_back(), value.pop_back();
    return;
  }
  if (value.empty() && v == 0) return;  // 0 before the first point anyway
  t.push_back(at), value.push_back(v);
}

std::string LinkStats::direction_name(const Topology& topology, int direction) {
  const Link& link = topology.links()[direction / 2];
  const std::string& a = topology.node(link.a).name;
  const std::string& b = topology.node(link.b).name;
  return direction % 2 == 0 ? a + "->" + b : b + "->" + a;
}

RecordPaths::RecordPaths(const Routes& routes, const FaultPlan& faults) : routes_(routes) {
  epoch_routes_.resize(faults.epochs.size());
  for (std::size_t e = 1; e < faults.epochs.size(); ++e)
    epoch_routes_[e] = std::make_unique<Routes>(routes.topology(), faults.epochs[e].down);
}

const std::vector<Hop>& RecordPaths::hops(const TransferRecord& record) const {
  if (record.sw >= 0) {
    const bool upload = record.src >= 0;
    const int chip = upload ? record.src : record.dst;
    auto [at, fresh] = legs_.try_emplace({chip, record.sw, upload});
    if (fresh) {
      const Topology& t = routes_.topology();
      const Vertex c = t.chip(chip), s = t.switches().at(record.sw);
      if (auto path = upload ? routes_.find(c, s) : routes_.find(s, c)) at->second = path->hops;
    }
    return at->second;
  }
  if (record.src == record.dst) return kNoHops;  // a chip's message to itself never leaves it
  const Routes& routes = record.epoch == 0 ? routes_ : *epoch_routes_.at(record.epoch);
  for (const PathShare& share : routes.message_paths(record.src, record.dst))
    if (share.index == record.path) return share.path.hops;
  return kNoHops;
}

std::vector<std::string> RecordPaths::link_names(const TransferRecord& record) const {
  std::vector<std::string> names;
  for (const Hop& hop : hops(record)) names.push_back(routes_.topology().links()[hop.link].name);
  return names;
}

namespace {

int direction_of(const Hop& hop) {
  return 2 * hop.link + (hop.up ? 0 : 1);
}

// The max-min rates of a set of flows (progressive filling): every direction with unfrozen flows offers
// its remaining capacity shared equally among them; the directions offering the least saturate and
// freeze their flows at that share, which is taken from every other direction those flows cross. A
// flow's bottleneck is the first direction along its path among those that froze it.
class MaxMin {
 public:
  explicit MaxMin(std::size_t directions) : remaining_(directions), count_(directions, 0), on_(directions) {}

  // `flows` are slot numbers; hops(f) its path; fills rate[f] and bottleneck[f].
  template <class Hops>
  void solve(const std::vector<int>& flows, const Hops& hops, const std::vector<double>& capacity,
             std::vector<double>& rate, std::vector<int>& bottleneck) {
    if (flows.size() == 1) {  // alone: its path's smallest capacity, first reached along the path
      const int f = flows.front();
      double level = std::numeric_limits<double>::infinity();
      for (const Hop& hop : hops(f)) level = std::min(level, capacity[direction_of(hop)]);
      rate[f] = level, bottleneck[f] = -1;
      for (const Hop& hop : hops(f))
        if (capacity[direction_of(hop)] <= level * (1 + 1e-12)) {
          bottleneck[f] = direction_of(hop);
          break;
        }
      return;
    }
    for (int d : touched_) count_[d] = 0, on_[d].clear();
    touched_.clear();
    for (int f : flows)
      for (const Hop& hop : hops(f)) {
        const int d = direction_of(hop);
        if (on_[d].empty()) touched_.push_back(d), remaining_[d] = capacity[d];
        on_[d].push_back(f), ++count_[d];
      }
    std::sort(touched_.begin(), touched_.end());  // a fixed order: results never depend on arrival order
    if (frozen_.size() < rate.size()) frozen_.resize(rate.size());
    for (int f : flows) frozen_[f] = false;
    std::size_t unfrozen = flows.size();
    while (unfrozen > 0) {
      double level = std::numeric_limits<double>::infinity();
      for (int d : touched_)
        if (count_[d] > 0) level = std::min(level, remaining_[d] / count_[d]);
      const double limit = level * (1 + 1e-12);
      saturated_.clear();
      for (int d : touched_)
        if (count_[d] > 0 && remaining_[d] / count_[d] <= limit) saturated_.push_back(d);
      for (int d : saturated_)
        for (int f : on_[d]) {
          if (frozen_[f]) continue;
          frozen_[f] = true, --unfrozen;
          rate[f] = level;
          bottleneck[f] = -1;
          for (const Hop& hop : hops(f)) {
            const int e = direction_of(hop);
            remaining_[e] = std::max(0.0, remaining_[e] - level), --count_[e];
            if (bottleneck[f] < 0 && std::binary_search(saturated_.begin(), saturated_.end(), e))
              bottleneck[f] = e;
          }
        }
    }
  }

 private:
  std::vector<double> remaining_;
  std::vector<int> count_;
  std::vector<std::vector<int>> on_;
  std::vector<int> touched_, saturated_;
  std::vector<char> frozen_;
};

// A flow on the wire: its record, path, current rate and bottleneck (since when), the bytes its rates
// have carried so far and how long each direction bounded it.
struct Live {
  std::size_t record = 0;
  const std::vector<Hop>* hops = nullptr;
  double since = 0, carried = 0;
  boost::container::small_vector<std::pair<int, double>, 1> bound;
};

// Every direction of every link (2 d: up, 2 d + 1: down) with its capacity; returns the capacities.
std::vector<double> link_stats_directions(const std::vector<Link>& links, LinkStats& stats) {
  const std::size_t D = 2 * links.size();
  stats.directions.resize(D);
  std::vector<double> capacity(D);
  for (std::size_t d = 0; d < D; ++d) {
    auto& s = stats.directions[d];
    s.link = static_cast<int>(d / 2), s.up = d % 2 == 0;
    s.capacity = capacity[d] = links[d / 2].bandwidth();
  }
  return capacity;
}

// Each record's path, looked up once (consecutive records often share a pair); bytes and flows per
// direction come straight from the records.
std::vector<const std::vector<Hop>*> link_stats_paths(const RecordPaths& paths,
                                                      const std::vector<TransferRecord>& records,
                                                      LinkStats& stats) {
  const std::size_t n = records.size();
  std::vector<const std::vector<Hop>*> path(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = records[i];
    const bool same = i > 0 && r.src == records[i - 1].src && r.dst == records[i - 1].dst &&
                      r.path == records[i - 1].path && r.epoch == records[i - 1].epoch &&
                      r.sw == records[i - 1].sw;
    path[i] = same ? path[i - 1] : &paths.hops(r);
    for (const Hop& hop : *path[i]) {
      auto& s = stats.directions[direction_of(hop)];
      s.bytes += r.bytes, ++s.flows;
    }
  }
  return path;
}

// Every direction's mean utilisation over the run, and the `hot` busiest directions that carried
// bytes (by mean utilisation, then bytes; ties in direction order) into stats.hot.
void link_stats_rank_hot(LinkStats& stats, double time_s, int hot) {
  for (auto& s : stats.directions)
    s.mean_util = time_s > 0 ? static_cast<double>(s.bytes) / (s.capacity * time_s) : 0.0;
  std::vector<int> order(stats.directions.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const auto &x = stats.directions[a], &y = stats.directions[b];
    return std::tie(y.mean_util, y.bytes) < std::tie(x.mean_util, x.bytes);
  });
  for (int d : order)
    if (static_cast<int>(stats.hot.size()) < hot && stats.directions[d].bytes > 0) stats.hot.push_back(d);
}

// Per tier of the topology: its directions, their capacity and the bytes they carried.
std::vector<TierLoad> link_stats_tiers(const Topology& topology, const LinkStats& stats) {
  const auto& links = topology.links();
  const auto& tier_names = topology.tiers();
  std::vector<TierLoad> tiers(tier_names.size());
  for (std::size_t k = 0; k < tiers.size(); ++k) tiers[k].tier = tier_names[k];
  for (const Link& link : links)
    tiers[link.tier_index].directions += 2, tiers[link.tier_index].capacity += 2 * link.bandwidth();
  for (std::size_t d = 0; d < stats.directions.size(); ++d)
    tiers[links[d / 2].tier_index].bytes += stats.directions[d].bytes;
  return tiers;
}

// The records of the flows that occupy links (bytes, time on the wire and a path), by start.
std::vector<std::size_t> link_stats_by_start(const std::vector<TransferRecord>& records,
                                             const std::vector<const std::vector<Hop>*>& path) {
  std::vector<std::size_t> by_start;
  for (std::size_t i = 0; i < records.size(); ++i)
    if (records[i].bytes > 0 && records[i].wire_end > records[i].start && !path[i]->empty())
      by_start.push_back(i);
  auto earlier = [&](std::size_t a, std::size_t b) { return records[a].start < records[b].start; };
  if (!std::is_sorted(by_start.begin(), by_start.end(), earlier))  // runs give them sorted
    std::stable_sort(by_start.begin(), by_start.end(), earlier);
  return by_start;
}

// The sweep over the flows on the wire in time order: at every instant where flows end, bandwidths
// change or flows start, the max-min rates of the flows coupled to what changed are solved again, and
// each direction's busy time, peak, bottleneck time and rate series (hot ones) and each tier's
// utilisation follow; each flow's time bounded per direction and carried bytes go to stats.
class LinkStatsSweep {
 public:
  LinkStatsSweep(const std::vector<Link>& links, const std::vector<TransferRecord>& records,
                 const std::vector<const std::vector<Hop>*>& path, std::vector<double> capacity,
                 std::vector<TierLoad>& tiers, LinkStats& stats)
      : links_(links),
        records_(records),
        path_(path),
        capacity_(std::move(capacity)),
        tiers_(tiers),
        stats_(stats),
        is_hot_(capacity_.size(), 0),
        on_(capacity_.size()),
        dir_rate_(capacity_.size(), 0.0),
        dir_since_(capacity_.size(), 0.0),
        bound_since_(capacity_.size(), 0.0),
        bound_count_(capacity_.size(), 0),
        tier_rate_(tiers.size(), 0.0),
        dirty_(capacity_.size(), 0),
        seen_dir_(capacity_.size(), 0),
        solver_(capacity_.size()) {
    for (int d : stats.hot) is_hot_[d] = 1;
  }

  // Sweeps the flows `by_start` (record indices, by start) and the bandwidth `changes` (by time).
  void run(const std::vector<std::size_t>& by_start, const std::vector<FaultPlan::BandwidthChange>& changes) {
    std::size_t next = 0, next_change = 0;
    while (next < by_start.size() || !ends_.empty() || next_change < changes.size()) {
      double now = std::numeric_limits<double>::infinity();
      if (!ends_.empty()) now = ends_.top().first;
      if (next_change < changes.size()) now = std::min(now, changes[next_change].at);
      if (next < by_start.size()) now = std::min(now, records_[by_start[next]].start);
      // At one instant: flows end, bandwidths change, flows start (then the rates are solved once).
      end_flows(now);
      for (; next_change < changes.size() && changes[next_change].at == now; ++next_change)
        change_bandwidth(changes[next_change]);
      for (; next < by_start.size() && records_[by_start[next]].start == now; ++next)
        start_flow(by_start[next], now);
      solve_coupled(now);
      sample_tiers(now);
    }
  }

 private:
  void mark(int d) {
    if (!dirty_[d]) dirty_[d] = 1, dirty_list_.push_back(d);
  }

  // Settles a slot's rate and bottleneck up to `now`, then sets new ones.
  void set_flow(int slot, double now, double r, int b) {
    Live& f = live_[slot];
    const double dt = now - f.since;
    f.carried += rate_[slot] * dt;
    if (bottleneck_[slot] >= 0 && dt > 0) {
      auto it = std::find_if(f.bound.begin(), f.bound.end(),
                             [&](const auto& p) { return p.first == bottleneck_[slot]; });
      if (it == f.bound.end())
        f.bound.emplace_back(bottleneck_[slot], dt);
      else
        it->second += dt;
    }
    if (bottleneck_[slot] != b) {
      if (bottleneck_[slot] >= 0 && --bound_count_[bottleneck_[slot]] == 0)
        stats_.directions[bottleneck_[slot]].bottleneck_s += now - bound_since_[bottleneck_[slot]];
      if (b >= 0 && bound_count_[b]++ == 0) bound_since_[b] = now;
    }
    f.since = now, rate_[slot] = r, bottleneck_[slot] = b;
  }

  // Sets direction d's summed rate from `now`, settling its busy time, peak and rate series.
  void set_direction(int d, double now, double r) {
    if (r == dir_rate_[d]) return;
    auto& s = stats_.directions[d];
    if (dir_rate_[d] > 0) s.busy_s += now - dir_since_[d];
    tier_rate_[links_[d / 2].tier_index] += r - dir_rate_[d];
    dir_rate_[d] = r, dir_since_[d] = now;
    s.peak_util = std::max(s.peak_util, r / s.capacity);
    if (is_hot_[d]) s.rate.add(now, r);
  }

  // Takes the flows whose wire end is `now` off the wire: their flow error and longest bottleneck.
  void end_flows(double now) {
    while (!ends_.empty() && ends_.top().first == now) {
      const int slot = ends_.top().second;
      ends_.pop();
      set_flow(slot, now, 0.0, -1);
      Live& f = live_[slot];
      const auto& r = records_[f.record];
      stats_.max_flow_error =
          std::max(stats_.max_flow_error, std::abs(f.carried - static_cast<double>(r.bytes)) / r.bytes);
      auto& out = stats_.flows[f.record];
      for (const auto& [d, s] : f.bound)
        if (s > out.bound_s) out.direction = d, out.bound_s = s;
      for (const Hop& hop : *f.hops) mark(direction_of(hop));
      gone_[slot] = 1;
      leaving_.push_back(slot);
    }
    // The ended flows leave their directions' lists in one pass per direction, order kept (erasing each
    // flow from each of its lists was O(flows per direction) per flow: a third of a 576-chip all-to-all's
    // run), and their slots are free, in the order they ended.
    for (int d : dirty_list_) std::erase_if(on_[d], [&](int slot) { return gone_[slot] != 0; });
    for (int slot : leaving_) gone_[slot] = 0, free_slots_.push_back(slot);
    leaving_.clear();
  }

  // Both directions of the changed link take their new capacity.
  void change_bandwidth(const FaultPlan::BandwidthChange& change) {
    capacity_[2 * change.link] = capacity_[2 * change.link + 1] =
        links_[change.link].bandwidth() * change.fraction;
    mark(2 * change.link), mark(2 * change.link + 1);
  }

  // Puts record `record`'s flow on the wire at `now`, in a free slot or a new one.
  void start_flow(std::size_t record, double now) {
    int slot;
    if (free_slots_.empty()) {
      slot = static_cast<int>(live_.size());
      live_.emplace_back(), rate_.push_back(0), bottleneck_.push_back(-1), new_rate_.push_back(0);
      new_bottleneck_.push_back(-1), seen_flow_.push_back(0), gone_.push_back(0);
    } else {
      slot = free_slots_.back(), free_slots_.pop_back();
    }
    const auto& r = records_[record];
    live_[slot] = Live{record, path_[record], now, 0, {}};
    rate_[slot] = 0, bottleneck_[slot] = -1;
    for (const Hop& hop : *live_[slot].hops) {
      on_[direction_of(hop)].push_back(slot);
      mark(direction_of(hop));
    }
    ends_.push({r.wire_end, slot});
  }

  // Only the flows coupled (through shared directions) to what changed can change rate: solves those,
  // and sets their new rates and their directions' sums from `now`.
  void solve_coupled(double now) {
    component_.clear(), component_dirs_.clear(), queue_.assign(dirty_list_.begin(), dirty_list_.end());
    for (int d : dirty_list_) seen_dir_[d] = 1, dirty_[d] = 0;
    dirty_list_.clear();
    while (!queue_.empty()) {
      const int d = queue_.back();
      queue_.pop_back();
      component_dirs_.push_back(d);
      for (int slot : on_[d]) {
        if (seen_flow_[slot]) continue;
        seen_flow_[slot] = 1, component_.push_back(slot);
        for (const Hop& hop : *live_[slot].hops)
          if (!seen_dir_[direction_of(hop)])
            seen_dir_[direction_of(hop)] = 1, queue_.push_back(direction_of(hop));
      }
    }
    std::sort(component_.begin(), component_.end());
    auto hops_of = [&](int slot) -> const std::vector<Hop>& { return *live_[slot].hops; };
    solver_.solve(component_, hops_of, capacity_, new_rate_, new_bottleneck_);
    for (int slot : component_) {
      seen_flow_[slot] = 0;
      if (new_rate_[slot] != rate_[slot] || new_bottleneck_[slot] != bottleneck_[slot])
        set_flow(slot, now, new_rate_[slot], new_bottleneck_[slot]);
    }
    for (int d : component_dirs_) {
      seen_dir_[d] = 0;
      double sum = 0;
      for (int slot : on_[d]) sum += rate_[slot];
      set_direction(d, now, sum);
    }
  }

  // Every tier's utilisation at `now`: its peak and series.
  void sample_tiers(double now) {
    for (std::size_t k = 0; k < tiers_.size(); ++k) {
      if (tiers_[k].capacity <= 0) continue;
      if (std::abs(tier_rate_[k]) < 1e-9 * tiers_[k].capacity)
        tier_rate_[k] = 0;  // what the deltas leave of 0
      const double util = tier_rate_[k] / tiers_[k].capacity;
      tiers_[k].peak_util = std::max(tiers_[k].peak_util, util);
      tiers_[k].util.add(now, util);
    }
  }

  const std::vector<Link>& links_;
  const std::vector<TransferRecord>& records_;
  const std::vector<const std::vector<Hop>*>& path_;
  std::vector<double> capacity_;  // per direction, as the bandwidth changes leave it
  std::vector<TierLoad>& tiers_;
  LinkStats& stats_;
  std::vector<char> is_hot_;
  // Live flows sit in slots; per slot its rate and bottleneck (for the solver), per direction the
  // slots on it, its summed rate and since when, and how many flows it bounds and since when.
  std::vector<Live> live_;
  std::vector<int> free_slots_;
  std::vector<double> rate_, new_rate_;
  std::vector<int> bottleneck_, new_bottleneck_;
  std::vector<std::vector<int>> on_;
  std::vector<double> dir_rate_, dir_since_, bound_since_;
  std::vector<int> bound_count_;
  std::vector<double> tier_rate_;
  using Ending = std::pair<double, int>;  // (wire end, slot)
  std::priority_queue<Ending, std::vector<Ending>, std::greater<>> ends_;
  std::vector<char> dirty_, seen_dir_, seen_flow_;
  std::vector<char> gone_;    // per slot: its flow has ended, and it is still on its directions' lists
  std::vector<int> leaving_;  // those slots, free after the next solve_coupled
  std::vector<int> dirty_list_, component_, component_dirs_, queue_;
  MaxMin solver_;
};

// Each tier's busiest direction's peak and its mean utilisation; the tiers that have directions go to
// stats, in tier order.
void link_stats_finish_tiers(const std::vector<Link>& links, std::vector<TierLoad>& tiers, double time_s,
                             LinkStats& stats) {
  for (std::size_t d = 0; d < stats.directions.size(); ++d) {
    auto& tier = tiers[links[d / 2].tier_index];
    tier.busiest_peak_util = std::max(tier.busiest_peak_util, stats.directions[d].peak_util);
  }
  for (auto& tier : tiers) {
    if (tier.directions == 0) continue;
    tier.mean_util = time_s > 0 ? static_cast<double>(tier.bytes) / (tier.capacity * time_s) : 0.0;
    stats.tiers.push_back(std::move(tier));
  }
}

}  // namespace

LinkStats compute_link_stats(const Topology& topology, const RecordPaths& paths, const FaultPlan& faults,
                             const std::vector<TransferRecord>& records, double time_s,
                             const LinkStatsOptions& options) {
  const auto& links = topology.links();
  LinkStats stats;
  stats.time_s = time_s;
  std::vector<double> capacity = link_stats_directions(links, stats);
  const std::vector<const std::vector<Hop>*> path = link_stats_paths(paths, records, stats);
  link_stats_rank_hot(stats, time_s, options.hot);
  std::vector<TierLoad> tiers = link_stats_tiers(topology, stats);
  const std::vector<std::size_t> by_start = link_stats_by_start(records, path);
  stats.flows.assign(records.size(), FlowBottleneck{});
  for (std::size_t i = 0; i < records.size(); ++i)
    stats.flows[i].wire_s = std::max(0.0, records[i].wire_end - records[i].start);
  LinkStatsSweep(links, records, path, std::move(capacity), tiers, stats)
      .run(by_start, faults.bandwidth_changes);
  link_stats_finish_tiers(links, tiers, time_s, stats);
  return stats;
}

std::vector<double> bin_averages(const StepSeries& series, double end, int bins) {
  std::vector<double> out(bins > 0 ? bins : 0, 0.0);
  if (bins <= 0 || !(end > 0)) return out;
  const double width = end / bins;
  for (std::size_t i = 0; i < series.t.size(); ++i) {
    // value[i] on [a, b), spread over the bins it covers.
    const double a = series.t[i], b = std::min(end, i + 1 < series.t.size() ? series.t[i + 1] : end);
    if (!(b > a)) continue;
    for (auto k = static_cast<int>(a / width); k < bins && k * width < b; ++k) {
      const double lo = std::max(a, k * width), hi = std::min(b, k + 1 == bins ? end : (k + 1) * width);
      if (hi > lo) out[k] += series.value[i] * (hi - lo);
    }
  }
  for (int k = 0; k < bins; ++k) out[k] /= (k + 1 == bins ? end - k * width : width);
  return out;
}

namespace {

nlohmann::json bins_json(const StepSeries& series, double end, int bins, double scale) {
  nlohmann::json out = nlohmann::json::array();
  for (double v : bin_averages(series, end, bins)) out.push_back(v * scale);
  return out;
}

}  // namespace

nlohmann::json direction_json(const Topology& topology, const LinkStats& stats, int d) {
  const DirectionStats& s = stats.directions[d];
  const Link& link = topology.links()[s.link];
  return {{"link", link.name},        {"direction", LinkStats::direction_name(topology, d)},
          {"tier", link.tier},        {"capacity_GBps", s.capacity / 1e9},
          {"bytes", s.bytes},         {"flows", s.flows},
          {"busy_s", s.busy_s},       {"mean_util", s.mean_util},
          {"peak_util", s.peak_util}, {"bottleneck_s", s.bottleneck_s}};
}

std::uint64_t link_bytes(const RecordPaths& paths, const std::vector<TransferRecord>& records) {
  std::uint64_t total = 0;
  for (const TransferRecord& x : records) total += x.bytes * paths.hops(x).size();
  return total;
}

std::vector<std::uint64_t> direction_bytes(const RecordPaths& paths,
                                           const std::vector<TransferRecord>& records, std::size_t links) {
  std::vector<std::uint64_t> carried(2 * links, 0);
  for (const TransferRecord& x : records)
    for (const Hop& h : paths.hops(x))
      carried[2 * static_cast<std::size_t>(h.link) + (h.up ? 0 : 1)] += x.bytes;
  return carried;
}

nlohmann::json link_stats_json(const Topology& topology, const LinkStats& stats, int bins) {
  nlohmann::json tiers = nlohmann::json::array();
  for (const TierLoad& tier : stats.tiers)
    tiers.push_back({{"tier", tier.tier},
                     {"directions", tier.directions},
                     {"capacity_GBps", tier.capacity / 1e9},
                     {"bytes", tier.bytes},
                     {"mean_util", tier.mean_util},
                     {"peak_util", tier.peak_util},
                     {"busiest_peak_util", tier.busiest_peak_util},
                     {"util_bins", bins_json(tier.util, stats.time_s, bins, 1.0)}});
  nlohmann::json hot = nlohmann::json::array();
  for (int d : stats.hot) {
    nlohmann::json one = direction_json(topology, stats, d);
    one["util_bins"] =
        bins_json(stats.directions[d].rate, stats.time_s, bins, 1.0 / stats.directions[d].capacity);
    hot.push_back(std::move(one));
  }
  std::uint64_t bytes = 0;
  for (const auto& s : stats.directions) bytes += s.bytes;
  return {{"bins", bins},        {"bin_s", bins > 0 ? stats.time_s / bins : 0.0},
          {"tiers", tiers},      {"hot", hot},
          {"link_bytes", bytes}, {"max_flow_error", stats.max_flow_error}};
}

std::string link_stats_csv(const Topology& topology, const LinkStats& stats) {
  static const char* kFields[] = {"link",  "direction", "tier",      "capacity_GBps", "bytes",
                                  "flows", "busy_s",    "mean_util", "peak_util",     "bottleneck_s"};
  std::ostringstream out;
  for (const char* field : kFields) out << (field == kFields[0] ? "" : ",") << field;
  out << "\n";
  for (std::size_t d = 0; d < stats.directions.size(); ++d) {
    const nlohmann::json row = direction_json(topology, stats, static_cast<int>(d));
    for (const char* field : kFields) {
      const auto& v = row[field];
      out << (field == kFields[0] ? "" : ",") << (v.is_string() ? csv_text(v.get<std::string>()) : v.dump());
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace ultrasim
