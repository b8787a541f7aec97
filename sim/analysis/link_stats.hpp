// What each link carried during a run, and when: per link direction the bytes, the busy time, the mean
// and peak utilisation and (for the hottest) the utilisation over time; the same per tier; and for
// every flow the link direction that bounded its rate the longest (bottleneck attribution).
//
// Exact under the max-min model: a run's records give every flow's path and its life on the wire
// [start, wire_end]. Between two consecutive instants where some flow starts or ends (or a link's
// bandwidth changes), the set of flows on the wire is fixed, and SimGrid's max-min sharing (equal
// weights, delivered bandwidth per direction) gives each a constant rate: the progressive filling
// computed here for that set. A flow's rates integrate back to its bytes (`max_flow_error` reports how
// closely: rounding only when the records are SimGrid's own), the rates on a direction never exceed its
// capacity, and a direction's rate integrates to the bytes it carried. Free of SimGrid.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engines/records.hpp"
#include "sim/machine/faults.hpp"
#include "topology/routing.hpp"

namespace ultrasim {

// A piecewise-constant function of time: value[i] holds on [t[i], t[i+1]) and the last one until the
// end of the run; it is 0 before t[0]. Consecutive values differ.
struct StepSeries {
  std::vector<double> t, value;
  void add(double at, double v);  // appends a change point (a no-op if v equals the last value)
};

// One direction of one link: index 2 x link (+1 when traversed from Link::b to Link::a).
struct DirectionStats {
  int link = 0;
  bool up = true;           // from Link::a to Link::b
  double capacity = 0;      // delivered bandwidth, B/s (before any degrade fault)
  std::uint64_t bytes = 0;  // carried: the bytes of every flow that crossed it
  std::uint64_t flows = 0;  // flows that crossed it
  double busy_s = 0;        // time with some flow on it
  double mean_util = 0;     // bytes / (capacity x run time)
  double peak_util = 0;     // highest rate / capacity over the run (<= 1)
  double bottleneck_s = 0;  // time during which it bounded the rate of at least one flow
  StepSeries rate;          // B/s over time: kept for the hottest directions only (LinkStatsOptions)
};

// Every direction of a tier's links together.
struct TierLoad {
  std::string tier;
  int directions = 0;            // link directions in the tier (2 per link)
  double capacity = 0;           // their capacities summed, B/s
  std::uint64_t bytes = 0;       // carried over all of them (a flow counts once per direction it crosses)
  double mean_util = 0;          // bytes / (capacity x run time)
  double peak_util = 0;          // highest (sum of rates) / capacity over the run
  double busiest_peak_util = 0;  // highest peak_util of one of its directions
  StepSeries util;               // (sum of rates) / capacity over time
};

// Per flow record: the direction that bounded its rate for the longest time, and for how long.
struct FlowBottleneck {
  int direction = -1;  // -1: none (a flow that crossed no link, or carried no byte)
  double bound_s = 0;
  double wire_s = 0;  // its time on the wire, wire_end - start
};

struct LinkStatsOptions {
  int hot = 5;  // how many of the busiest directions (by mean utilisation) keep their rate series
};

struct LinkStats {
  double time_s = 0;                       // the run's time: mean utilisations are over [0, time_s]
  std::vector<DirectionStats> directions;  // 2 per link, in Topology::links() order (a, then b)
  std::vector<TierLoad> tiers;             // in Topology::tiers() order, tiers without links left out
  std::vector<int> hot;                    // the hottest used directions, busiest first
  std::vector<FlowBottleneck> flows;       // per record, in the order given
  // Largest |integral of a flow's computed rate - its bytes| / its bytes over all flows: 0 up to
  // rounding when the records and the model agree (SimGrid's or the contention-free engine's runs).
  double max_flow_error = 0;

  // "chip0-server0_switch" traversed a -> b is "chip0->server0_switch".
  static std::string direction_name(const Topology& topology, int direction);
};

// The links of a record's path, in path order. Uses the routes of the record's epoch: `routes` for
// epoch 0, the plan's epoch routes (recomputed) after; an in-switch reduction leg takes the route
// between its chip and its switch.
class RecordPaths {
 public:
  RecordPaths(const Routes& routes, const FaultPlan& faults);
  const std::vector<Hop>& hops(const TransferRecord& record) const;
  // Link names along the record's path ("chip0-server0_switch", ...).
  std::vector<std::string> link_names(const TransferRecord& record) const;

 private:
  const Routes& routes_;
  std::vector<std::unique_ptr<Routes>> epoch_routes_;  // [0] unused
  // In-switch reduction legs' routes, by (chip, switch, upload?), found when first asked for.
  mutable std::map<std::tuple<int, int, bool>, std::vector<Hop>> legs_;
  static const std::vector<Hop> kNoHops;
};

// Every record's bytes times the links its path crosses, summed: what the links carried in all (the
// statistics' link_bytes, without solving for rates).
std::uint64_t link_bytes(const RecordPaths& paths, const std::vector<TransferRecord>& records);
// The same per link direction (2 x link, + 1 from Link::b to Link::a) of a topology of `links` links:
// what each carried (their sum is link_bytes).
std::vector<std::uint64_t> direction_bytes(const RecordPaths& paths,
                                           const std::vector<TransferRecord>& records, std::size_t links);

// The statistics of a run's transfer records (sorted or not) on `topology`, whose run ended at time_s;
// the faults' bandwidth changes (degrade) lower capacities from their times on.
LinkStats compute_link_stats(const Topology& topology, const RecordPaths& paths, const FaultPlan& faults,
                             const std::vector<TransferRecord>& records, double time_s,
                             const LinkStatsOptions& options = {});

// The mean of a series over each of `bins` equal intervals of [0, end] (exact: bin k's value times its
// width is the series' integral over it).
std::vector<double> bin_averages(const StepSeries& series, double end, int bins);

// How many intervals of the run the JSON's utilisation series have (their exact means: a series' every
// change would make a trn3 ring's JSON megabytes long; traces carry every change).
constexpr int kUtilisationBins = 100;

// The result JSON's "links" object: "bins" and "bin_s" (the run's time / bins); per tier its
// directions, capacity_GBps, bytes, mean_util, peak_util, busiest_peak_util and util_bins (mean
// utilisation per bin); the hottest directions ("hot": direction_json and util_bins); "link_bytes"
// (every direction's bytes summed: bytes x hops over all flows) and max_flow_error.
nlohmann::json link_stats_json(const Topology& topology, const LinkStats& stats, int bins = kUtilisationBins);
// One direction's statistics as JSON (no series): link, direction, tier, capacity_GBps, bytes, flows,
// busy_s, mean_util, peak_util, bottleneck_s.
nlohmann::json direction_json(const Topology& topology, const LinkStats& stats, int direction);
// Every direction, one CSV row each (the fields of direction_json), in direction order.
std::string link_stats_csv(const Topology& topology, const LinkStats& stats);

}  // namespace ultrasim
