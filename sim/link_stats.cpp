#include "sim/link_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include <boost/container/small_vector.hpp>

#include "topology/units.hpp"

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

// The max-min rates of one set of flows (progressive filling): every direction with unfrozen flows
// offers its remaining capacity shared equally among them; the directions offering the least saturate
// and freeze their flows at that share, which is taken from every other direction those flows cross.
class MaxMin {
 public:
  explicit MaxMin(std::size_t directions)
      : remaining_(directions), count_(directions, 0), rate_(directions, 0), on_(directions) {}

  // flows[i] crosses dirs[i]; fills rate (per flow) and bottleneck (per flow: the first direction of its
  // path among those that froze it). Afterwards direction_rate(d) is the sum of rates on d, for the
  // directions in touched().
  template <class Dirs>
  void solve(const std::vector<int>& flows, const Dirs& dirs, const std::vector<double>& capacity,
             std::vector<double>& rate, std::vector<int>& bottleneck) {
    for (int d : touched_) count_[d] = 0, rate_[d] = 0, on_[d].clear();
    touched_.clear();
    for (int f : flows)
      for (const Hop& hop : dirs(f)) {
        const int d = direction_of(hop);
        if (on_[d].empty()) touched_.push_back(d), remaining_[d] = capacity[d];
        on_[d].push_back(f), ++count_[d];
      }
    std::sort(touched_.begin(), touched_.end());  // a fixed order: results never depend on arrival order
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
      for (int d : saturated_) {
        for (int f : on_[d]) {
          if (frozen_[f]) continue;
          frozen_[f] = true, --unfrozen;
          rate[f] = level;
          for (const Hop& hop : dirs(f)) {
            const int e = direction_of(hop);
            remaining_[e] = std::max(0.0, remaining_[e] - level), --count_[e], rate_[e] += level;
          }
          // The first direction along its path among the saturated ones names its bottleneck.
          for (const Hop& hop : dirs(f))
            if (std::binary_search(saturated_.begin(), saturated_.end(), direction_of(hop))) {
              bottleneck[f] = direction_of(hop);
              break;
            }
        }
      }
    }
  }
  void resize_flows(std::size_t n) { frozen_.assign(n, false); }
  const std::vector<int>& touched() const { return touched_; }
  double direction_rate(int d) const { return rate_[d]; }

 private:
  std::vector<double> remaining_;
  std::vector<int> count_;
  std::vector<double> rate_;
  std::vector<std::vector<int>> on_;
  std::vector<int> touched_, saturated_;
  std::vector<char> frozen_;
};

}  // namespace

LinkStats compute_link_stats(const Topology& topology, const RecordPaths& paths, const FaultPlan& faults,
                             const std::vector<TransferRecord>& records, double time_s,
                             const LinkStatsOptions& options) {
  const auto& links = topology.links();
  const std::size_t D = 2 * links.size();
  LinkStats stats;
  stats.time_s = time_s;
  stats.directions.resize(D);
  std::vector<double> capacity(D);
  for (std::size_t d = 0; d < D; ++d) {
    auto& s = stats.directions[d];
    s.link = static_cast<int>(d / 2), s.up = d % 2 == 0;
    s.capacity = capacity[d] = links[d / 2].bandwidth();
  }
  // Bytes and flows per direction come straight from the records.
  const std::size_t n = records.size();
  std::vector<const std::vector<Hop>*> hops(n);
  for (std::size_t i = 0; i < n; ++i) {
    hops[i] = &paths.hops(records[i]);
    for (const Hop& hop : *hops[i]) {
      auto& s = stats.directions[direction_of(hop)];
      s.bytes += records[i].bytes, ++s.flows;
    }
  }
  for (auto& s : stats.directions)
    s.mean_util = time_s > 0 ? static_cast<double>(s.bytes) / (s.capacity * time_s) : 0.0;
  // The hottest used directions keep their series.
  std::vector<int> order(D);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const auto &x = stats.directions[a], &y = stats.directions[b];
    return std::tie(y.mean_util, y.bytes) < std::tie(x.mean_util, x.bytes);
  });
  for (int d : order)
    if (static_cast<int>(stats.hot.size()) < options.hot && stats.directions[d].bytes > 0)
      stats.hot.push_back(d);

  // Tiers: their directions' capacities.
  const auto& tier_names = topology.tiers();
  std::vector<TierLoad> tiers(tier_names.size());
  for (std::size_t k = 0; k < tiers.size(); ++k) tiers[k].tier = tier_names[k];
  for (const Link& link : links) {
    auto& tier = tiers[link.tier_index];
    tier.directions += 2, tier.capacity += 2 * link.bandwidth();
  }
  for (std::size_t d = 0; d < D; ++d) tiers[links[d / 2].tier_index].bytes += stats.directions[d].bytes;

  // Events: flow starts and ends, bandwidth changes; the flows on the wire are fixed in between.
  struct Event {
    double at;
    int kind;  // 0: a flow ends, 1: a bandwidth change, 2: a flow starts (in this order at one instant)
    std::size_t index;
  };
  std::vector<Event> events;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = records[i];
    if (hops[i]->empty() || r.bytes == 0 || !(r.wire_end > r.start)) continue;
    events.push_back({r.start, 2, i});
    events.push_back({r.wire_end, 0, i});
  }
  for (std::size_t c = 0; c < faults.bandwidth_changes.size(); ++c)
    events.push_back({faults.bandwidth_changes[c].at, 1, c});
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return std::tie(a.at, a.kind, a.index) < std::tie(b.at, b.kind, b.index);
  });

  stats.flows.assign(n, FlowBottleneck{});
  for (std::size_t i = 0; i < n; ++i)
    stats.flows[i].wire_s = std::max(0.0, records[i].wire_end - records[i].start);
  std::vector<double> carried(n, 0.0), rate(n, 0.0);
  std::vector<int> bottleneck(n, -1);
  // Per flow: time bounded by each direction that bounded it (a few at most).
  std::vector<boost::container::small_vector<std::pair<int, double>, 2>> bound(n);
  std::vector<int> active;
  std::vector<std::size_t> position(n, 0);
  MaxMin solver(D);
  solver.resize_flows(n);
  std::vector<double> tier_rate(tiers.size(), 0.0);
  std::vector<int> bounding;  // directions bounding some flow in the current interval
  std::vector<char> is_bounding(D, 0);
  auto path_of = [&](int f) -> const std::vector<Hop>& { return *hops[f]; };

  for (std::size_t e = 0; e < events.size();) {
    const double now = events[e].at;
    for (; e < events.size() && events[e].at == now; ++e) {
      const Event& ev = events[e];
      if (ev.kind == 0) {
        const std::size_t at = position[ev.index];
        position[active.back()] = at;
        active[at] = active.back();
        active.pop_back();
      } else if (ev.kind == 2) {
        position[ev.index] = active.size();
        active.push_back(static_cast<int>(ev.index));
      } else {
        const auto& change = faults.bandwidth_changes[ev.index];
        capacity[2 * change.link] = links[change.link].bandwidth() * change.fraction;
        capacity[2 * change.link + 1] = capacity[2 * change.link];
      }
    }
    const double next = e < events.size() ? events[e].at : now;
    const double dt = next - now;
    solver.solve(active, path_of, capacity, rate, bottleneck);
    for (int d : bounding) is_bounding[d] = 0;
    bounding.clear();
    for (int f : active) {
      carried[f] += rate[f] * dt;
      if (!is_bounding[bottleneck[f]]) is_bounding[bottleneck[f]] = 1, bounding.push_back(bottleneck[f]);
      auto& list = bound[f];
      auto it =
          std::find_if(list.begin(), list.end(), [&](const auto& p) { return p.first == bottleneck[f]; });
      if (it == list.end())
        list.emplace_back(bottleneck[f], dt);
      else
        it->second += dt;
    }
    for (int d : bounding) stats.directions[d].bottleneck_s += dt;
    std::fill(tier_rate.begin(), tier_rate.end(), 0.0);
    for (int d : solver.touched()) {
      const double r = solver.direction_rate(d);
      auto& s = stats.directions[d];
      if (r > 0) s.busy_s += dt;
      s.peak_util = std::max(s.peak_util, r / s.capacity);
      tier_rate[links[d / 2].tier_index] += r;
    }
    for (std::size_t k = 0; k < tiers.size(); ++k) {
      if (tiers[k].capacity <= 0) continue;
      const double util = tier_rate[k] / tiers[k].capacity;
      tiers[k].peak_util = std::max(tiers[k].peak_util, util);
      tiers[k].util.add(now, util);
    }
    for (int d : stats.hot) {
      const auto& touched = solver.touched();
      const bool on = std::binary_search(touched.begin(), touched.end(), d);
      stats.directions[d].rate.add(now, on ? solver.direction_rate(d) : 0.0);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto& list = bound[i];
    for (const auto& [d, s] : list)
      if (s > stats.flows[i].bound_s) stats.flows[i].direction = d, stats.flows[i].bound_s = s;
    if (records[i].bytes > 0 && !hops[i]->empty() && records[i].wire_end > records[i].start)
      stats.max_flow_error =
          std::max(stats.max_flow_error,
                   std::abs(carried[i] - static_cast<double>(records[i].bytes)) / records[i].bytes);
  }
  for (std::size_t d = 0; d < D; ++d) {
    auto& tier = tiers[links[d / 2].tier_index];
    tier.busiest_peak_util = std::max(tier.busiest_peak_util, stats.directions[d].peak_util);
  }
  for (auto& tier : tiers) {
    if (tier.directions == 0) continue;
    tier.mean_util = time_s > 0 ? static_cast<double>(tier.bytes) / (tier.capacity * time_s) : 0.0;
    stats.tiers.push_back(std::move(tier));
  }
  return stats;
}

namespace {

nlohmann::json series_json(const StepSeries& series, double scale) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < series.t.size(); ++i) out.push_back({series.t[i], series.value[i] * scale});
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

nlohmann::json link_stats_json(const Topology& topology, const LinkStats& stats) {
  nlohmann::json tiers = nlohmann::json::array();
  for (const TierLoad& tier : stats.tiers)
    tiers.push_back({{"tier", tier.tier},
                     {"directions", tier.directions},
                     {"capacity_GBps", tier.capacity / 1e9},
                     {"bytes", tier.bytes},
                     {"mean_util", tier.mean_util},
                     {"peak_util", tier.peak_util},
                     {"busiest_peak_util", tier.busiest_peak_util},
                     {"util_series", series_json(tier.util, 1.0)}});
  nlohmann::json hot = nlohmann::json::array();
  for (int d : stats.hot) {
    nlohmann::json one = direction_json(topology, stats, d);
    one["util_series"] = series_json(stats.directions[d].rate, 1.0 / stats.directions[d].capacity);
    hot.push_back(std::move(one));
  }
  std::uint64_t bytes = 0;
  for (const auto& s : stats.directions) bytes += s.bytes;
  return {{"tiers", tiers}, {"hot", hot}, {"link_bytes", bytes}, {"max_flow_error", stats.max_flow_error}};
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
