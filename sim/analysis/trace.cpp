#include "sim/analysis/trace.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <sstream>
#include <tuple>

#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {
namespace {

constexpr int kComputeTrack = 0;  // tid of a chip's compute track; its send lanes follow, then receive
constexpr int kExtraComputeTracks = 1 << 20;  // tid of a chip's compute track k + 1 is this + k

// One side of a flow (or of a chip's flows of one step, aggregated) on the process of that side.
struct Slice {
  int pid = 0;
  bool send = true;
  double ts = 0, end = 0;  // µs
  std::size_t record = 0;  // the (first) flow record
  std::uint64_t bytes = 0;
  int flows = 0;
  int lane = 0;
};

// Ranks, then switches, then the fabric: the pid of one end of a flow (-1 on a leg: its switch).
int end_pid(const Topology& t, const TransferRecord& x, bool source) {
  const int chip = source ? x.src : x.dst;
  return chip >= 0 ? chip : t.chip_count() + x.sw;
}

std::string end_name(const Topology& t, const TransferRecord& x, bool source) {
  const int chip = source ? x.src : x.dst;
  return chip >= 0 ? t.node(t.chip(chip)).name : "switch " + t.node(t.switches()[x.sw]).name;
}

bool in_window(const TraceOptions& o, double start, double end) {
  return end >= o.from && start <= o.to;
}

// Lanes, first fit: each slice goes on the lowest lane of its (pid, side) whose last slice has ended,
// so no two slices of a track overlap. Returns the lanes used per (pid, side).
std::map<std::pair<int, bool>, int> assign_lanes(std::vector<Slice>& slices) {
  std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
    return std::tie(a.pid, a.send, a.ts) < std::tie(b.pid, b.send, b.ts);
  });
  std::map<std::pair<int, bool>, int> lanes;
  using Busy = std::pair<double, int>;  // (end, lane)
  std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
  std::set<int> free;
  for (std::size_t i = 0; i < slices.size(); ++i) {
    Slice& s = slices[i];
    int& used = lanes[{s.pid, s.send}];
    if (i > 0 && (slices[i - 1].pid != s.pid || slices[i - 1].send != s.send)) {
      busy = {};
      free.clear();
    }
    while (!busy.empty() && busy.top().first <= s.ts) {
      free.insert(busy.top().second);
      busy.pop();
    }
    if (free.empty()) free.insert(used++);
    s.lane = *free.begin();
    free.erase(free.begin());
    busy.push({s.end, s.lane});
  }
  return lanes;
}

class EventWriter {
 public:
  explicit EventWriter(OutputFile& out) : out_(out) { out_ << "{\"traceEvents\":[\n"; }
  void operator()(const nlohmann::json& event) {
    out_ << (first_ ? "" : ",\n") << json_text(event);
    first_ = false;
  }
  void finish(const nlohmann::json& other) {
    out_ << "\n],\"displayTimeUnit\":\"ns\",\"otherData\":" << json_text(other) << "}\n";
  }

 private:
  OutputFile& out_;
  bool first_ = true;
};

nlohmann::json name_event(const char* what, int pid, int tid, const std::string& name) {
  nlohmann::json event{{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", {{"name", name}}}};
  if (tid >= 0) event["tid"] = tid;
  return event;
}

// A series' changes inside the window as counter events, led by its value at the window's start.
void write_counter(EventWriter& write, int pid, const std::string& name, const StepSeries& series,
                   double scale, const TraceOptions& o) {
  auto point = [&](double t, double util) {
    write({{"ph", "C"}, {"name", name}, {"pid", pid}, {"ts", t * 1e6}, {"args", {{"util", util}}}});
  };
  std::optional<double> at_from;  // the value in effect at the window's start, if the series began by then
  bool started = false;
  for (std::size_t i = 0; i < series.t.size() && series.t[i] <= o.to; ++i) {
    if (series.t[i] <= o.from) {
      at_from = series.value[i] * scale;
      continue;
    }
    if (!started && at_from) point(o.from, *at_from);
    started = true;
    point(series.t[i], series.value[i] * scale);
  }
  if (!started && at_from) point(o.from, *at_from);
}

// Per chip, whether the trace shows its events (TraceOptions::chips).
std::vector<bool> trace_shown_chips(const Topology& t, const TraceOptions& o) {
  std::vector<bool> shown(t.chip_count(), o.chips.empty());
  for (int r : o.chips) shown[r] = true;
  return shown;
}

// A side of a flow shows if its chip does; a switch's side of a leg, if the leg's chip does.
bool trace_side_shown(const std::vector<bool>& shown, const TransferRecord& x, bool send) {
  const int chip = send ? (x.src >= 0 ? x.src : x.dst) : (x.dst >= 0 ? x.dst : x.src);
  return shown[chip];
}

// Both sides of every kept flow, or per (process, side, step) when aggregating.
std::vector<Slice> trace_slices(const Topology& t, const std::vector<TransferRecord>& records,
                                const std::vector<bool>& shown, const TraceOptions& o) {
  std::vector<Slice> slices;
  std::map<std::tuple<int, bool, int>, std::size_t> step_slice;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const TransferRecord& x = records[i];
    if (!in_window(o, x.start, x.end)) continue;
    for (bool send : {true, false}) {
      if (!trace_side_shown(shown, x, send)) continue;
      const int pid = end_pid(t, x, send);
      if (!o.aggregate_steps) {
        slices.push_back({pid, send, x.start * 1e6, x.end * 1e6, i, x.bytes, 1});
        continue;
      }
      auto [it, fresh] = step_slice.try_emplace({pid, send, x.step}, slices.size());
      if (fresh) slices.push_back({pid, send, x.start * 1e6, x.end * 1e6, i, 0, 0});
      Slice& s = slices[it->second];
      s.ts = std::min(s.ts, x.start * 1e6);
      s.end = std::max(s.end, x.end * 1e6);
      s.bytes += x.bytes;
      ++s.flows;
    }
  }
  return slices;
}

// The slices' lanes (assign_lanes) and their tracks: after a process's compute track (tid 0) its send
// lanes, then its receive lanes.
class TraceTracks {
 public:
  explicit TraceTracks(std::vector<Slice>& slices) : lanes_(assign_lanes(slices)) {}
  const std::map<std::pair<int, bool>, int>& lanes() const { return lanes_; }
  int tid_of(const Slice& s) const { return 1 + (s.send ? 0 : send_lanes(s.pid)) + s.lane; }

 private:
  int send_lanes(int pid) const {
    auto it = lanes_.find({pid, true});
    return it == lanes_.end() ? 0 : it->second;
  }
  std::map<std::pair<int, bool>, int> lanes_;
};

// The names (and the chips' sort order) of the processes and of every track of the trace.
void write_trace_names(EventWriter& write, const Topology& t, const std::vector<bool>& shown,
                       const TraceTracks& tracks) {
  const int chips = t.chip_count(), fabric = chips + static_cast<int>(t.switches().size());
  for (int r = 0; r < chips; ++r) {
    if (!shown[r]) continue;
    write(name_event("process_name", r, -1, t.node(t.chip(r)).name));
    write({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", r}, {"args", {{"sort_index", r}}}});
    write(name_event("thread_name", r, kComputeTrack, "compute"));
  }
  for (std::size_t k = 0; k < t.switches().size(); ++k)
    write(name_event("process_name", chips + static_cast<int>(k), -1,
                     "switch " + t.node(t.switches()[k]).name));
  write(name_event("process_name", fabric, -1, "fabric (link utilisation)"));
  for (const auto& [key, count] : tracks.lanes())
    for (int lane = 0; lane < count; ++lane) {
      const Slice probe{key.first, key.second, 0, 0, 0, 0, 0, lane};
      write(name_event("thread_name", key.first, tracks.tid_of(probe),
                       (key.second ? "send " : "recv ") + std::to_string(lane)));
    }
}

// A slice's complete event on track `tid`: the step's sends or receives when aggregating, else the
// flow with its ends, path and bottleneck.
nlohmann::json trace_slice_event(const Topology& t, const TransferRecord& x, const Slice& s, int tid,
                                 const LinkStats* links, const TraceOptions& o) {
  nlohmann::json args;
  std::string name = "step " + std::to_string(x.step);
  if (o.aggregate_steps) {
    args = {{"step", x.step}, {"bytes", s.bytes}, {"flows", s.flows}};
    name += s.send ? " sends" : " receives";
  } else {
    args = {{"src", x.src}, {"dst", x.dst}, {"bytes", x.bytes}, {"step", x.step}, {"path", x.path}};
    if (x.sw >= 0) args["switch"] = t.node(t.switches()[x.sw]).name;
    if (x.epoch > 0) args["epoch"] = x.epoch;
    if (x.cancelled) args["cancelled"] = true;
    if (links != nullptr && links->flows[s.record].direction >= 0)
      args["bottleneck"] = LinkStats::direction_name(t, links->flows[s.record].direction);
    name += (s.send ? " to " : " from ") + end_name(t, x, !s.send) + (x.cancelled ? " (cancelled)" : "");
  }
  return {{"name", name},        {"cat", s.send ? "transfer" : "receive"},
          {"ph", "X"},           {"pid", s.pid},
          {"tid", tid},          {"ts", s.ts},
          {"dur", s.end - s.ts}, {"args", args}};
}

// Flows: a complete event on each side, and an arrow where both sides show (slices in time order).
void write_trace_flows(EventWriter& write, const Topology& t, const std::vector<TransferRecord>& records,
                       std::vector<Slice>& slices, const TraceTracks& tracks, const std::vector<bool>& shown,
                       const LinkStats* links, const TraceOptions& o) {
  std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
    return std::make_tuple(a.ts, a.record, !a.send) < std::make_tuple(b.ts, b.record, !b.send);
  });
  for (const Slice& s : slices) {
    const TransferRecord& x = records[s.record];
    const int tid = tracks.tid_of(s);
    write(trace_slice_event(t, x, s, tid, links, o));
    if (o.aggregate_steps || !trace_side_shown(shown, x, true) || !trace_side_shown(shown, x, false))
      continue;
    // The arrow's ends sit mid-slice, where they bind to this slice and no neighbour of its lane.
    nlohmann::json arrow{{"ph", s.send ? "s" : "f"},
                         {"cat", "flow"},
                         {"name", "flow"},
                         {"id", s.record},
                         {"pid", s.pid},
                         {"tid", tid},
                         {"ts", s.ts + (s.end - s.ts) / 2}};
    if (!s.send) arrow["bp"] = "e";
    write(arrow);
  }
}

// The shown chips' computations in the window, on their compute tracks: where a chip computes on several
// streams at once (a Chakra trace's compute stream and host), each interval on the first of its tracks
// "compute", "compute 2", ... that is free, so no two slices of a track overlap.
void write_trace_computes(EventWriter& write, const std::vector<ComputeRecord>& computes,
                          const std::vector<bool>& shown, const TraceOptions& o) {
  std::vector<const ComputeRecord*> order;
  for (const auto& c : computes)
    if (shown[c.chip] && in_window(o, c.start, c.end)) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](const ComputeRecord* a, const ComputeRecord* b) {
    return std::tie(a->chip, a->start) < std::tie(b->chip, b->start);
  });
  std::vector<double> lane_end;  // the chip's tracks: when each is free
  for (std::size_t i = 0; i < order.size(); ++i) {
    const ComputeRecord& c = *order[i];
    if (i == 0 || order[i - 1]->chip != c.chip) lane_end.clear();
    std::size_t lane = 0;
    while (lane < lane_end.size() && lane_end[lane] > c.start) ++lane;
    if (lane == lane_end.size()) {
      lane_end.push_back(0);
      if (lane > 0)
        write(name_event("thread_name", c.chip, kExtraComputeTracks + static_cast<int>(lane),
                         "compute " + std::to_string(lane + 1)));
    }
    lane_end[lane] = c.end;
    write({{"name", c.what},
           {"cat", "compute"},
           {"ph", "X"},
           {"pid", c.chip},
           {"tid", lane == 0 ? kComputeTrack : kExtraComputeTracks + static_cast<int>(lane)},
           {"ts", c.start * 1e6},
           {"dur", (c.end - c.start) * 1e6}});
  }
}

// The fabric process's counters: every tier's utilisation, then each hot direction's.
void write_trace_counters(EventWriter& write, const Topology& t, const LinkStats& links, int fabric,
                          const TraceOptions& o) {
  for (const TierLoad& tier : links.tiers) write_counter(write, fabric, "tier " + tier.tier, tier.util, 1, o);
  for (int d : links.hot) {
    const DirectionStats& s = links.directions[d];
    write_counter(write, fabric, "link " + LinkStats::direction_name(t, d), s.rate, 1 / s.capacity, o);
  }
}

// otherData: the run's result, and the trace's options under "trace".
nlohmann::json trace_other_data(const nlohmann::json& run, const TraceOptions& o, std::size_t flows) {
  nlohmann::json other = run;
  other["trace"] = {
      {"from_s", o.from},
      {"to_s", o.to == std::numeric_limits<double>::infinity() ? nlohmann::json() : nlohmann::json(o.to)},
      {"chips", o.chips.empty() ? nlohmann::json("all") : nlohmann::json(o.chips)},
      {"aggregate", o.aggregate_steps ? "step" : "none"},
      {"flows", flows}};
  return other;
}

}  // namespace

void parse_trace_window(const std::string& text, TraceOptions& options) {
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw InputError("--trace-window '" + text +
                     "': expected FROM:TO, times such as 10us:2ms (either may be empty)");
  const std::string from = text.substr(0, colon), to = text.substr(colon + 1);
  options.from = from.empty() ? 0 : parse_time(from);
  options.to = to.empty() ? std::numeric_limits<double>::infinity() : parse_time(to);
  if (options.to < options.from)
    throw InputError("--trace-window '" + text + "': its end is before its start");
}

void write_chrome_trace(OutputFile& out, const Topology& t, const SimResult& result, const LinkStats* links,
                        const nlohmann::json& run, const TraceOptions& o) {
  const int fabric = t.chip_count() + static_cast<int>(t.switches().size());
  const std::vector<bool> shown = trace_shown_chips(t, o);
  const auto& records = result.transfer_records;
  std::vector<Slice> slices = trace_slices(t, records, shown, o);
  const TraceTracks tracks(slices);
  EventWriter write(out);
  write_trace_names(write, t, shown, tracks);
  write_trace_flows(write, t, records, slices, tracks, shown, links, o);
  write_trace_computes(write, result.compute_records, shown, o);
  if (links != nullptr) write_trace_counters(write, t, *links, fabric, o);
  write.finish(trace_other_data(run, o, records.size()));
}

void write_flow_records(OutputFile& out, const Topology& t, const SimResult& result, const RecordPaths& paths,
                        const LinkStats* links, const TraceOptions& o) {
  const std::vector<bool> shown = trace_shown_chips(t, o);
  const auto& records = result.transfer_records;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const TransferRecord& x = records[i];
    if (!in_window(o, x.start, x.end)) continue;
    if (!((x.src >= 0 && shown[x.src]) || (x.dst >= 0 && shown[x.dst]))) continue;
    nlohmann::json names = nlohmann::json::array();
    for (const Hop& h : paths.hops(x))
      names.push_back(LinkStats::direction_name(t, 2 * h.link + (h.up ? 0 : 1)));
    nlohmann::json line{
        {"src", x.src},
        {"dst", x.dst},
        {"bytes", x.bytes},
        {"step", x.step},
        {"path", x.path},
        {"start_s", x.start},
        {"wire_end_s", x.wire_end},
        {"end_s", x.end},
        {"epoch", x.epoch},
        {"cancelled", x.cancelled},
        {"switch", x.sw >= 0 ? nlohmann::json(t.node(t.switches()[x.sw]).name) : nlohmann::json()},
        {"links", names},
        {"bottleneck", nullptr}};
    if (links != nullptr && links->flows[i].direction >= 0)
      line["bottleneck"] = LinkStats::direction_name(t, links->flows[i].direction);
    out << json_text(line) << "\n";
  }
}

}  // namespace ultrasim
