#include "sim/analysis/explain.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

#include "topology/base/units.hpp"

namespace ultrasim {
namespace {

// Two instants closer than this (relative to the time, past one second) are one: the clock reaches a
// wait's end through sleep_until, which may round the last bit.
double tolerance(double t) {
  return 1e-12 * std::max(1.0, t);
}

// An event that ends on a chip: a delivery to it, one of its own flows leaving the wire, a computation.
struct Ending {
  double at;
  int priority;  // 0 delivery, 1 computation, 2 own flow: the order the walk prefers at one instant
  std::size_t index;
};

std::string us(double seconds) {
  return fixed_text(seconds * 1e6, 2) + " us";
}

std::string pct(double fraction) {
  return fixed_text(fraction * 100, 1) + "%";
}

// The events that end on each chip, in the order the walk prefers at one instant; and per in-switch
// reduction (switch, step), the records of its uploads.
struct ExplainEndings {
  std::vector<std::vector<Ending>> ends;
  std::map<std::pair<int, int>, std::vector<std::size_t>> uploads;
};

ExplainEndings explain_endings(const SimResult& result, int p) {
  const auto& records = result.transfer_records;
  const auto& computes = result.compute_records;
  ExplainEndings out;
  out.ends.resize(p);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (r.cancelled) continue;
    if (r.dst >= 0) out.ends[r.dst].push_back({r.end, 0, i});
    if (r.src >= 0 && r.src != r.dst) out.ends[r.src].push_back({r.wire_end, 2, i});
    if (r.sw >= 0 && r.src >= 0) out.uploads[{r.sw, r.step}].push_back(i);
  }
  for (std::size_t i = 0; i < computes.size(); ++i)
    out.ends[computes[i].chip].push_back({computes[i].end, 1, i});
  for (auto& list : out.ends)
    std::sort(list.begin(), list.end(), [](const Ending& a, const Ending& b) {
      return std::tie(a.at, a.priority, a.index) < std::tie(b.at, b.priority, b.index);
    });
  return out;
}

// The critical path's walk backwards in time (explain.hpp), one segment at a time from a chip and an
// instant; walk() returns the segments latest first.
class ExplainWalk {
 public:
  ExplainWalk(const SimResult& result, const LinkStats& stats, int p)
      : records_(result.transfer_records),
        computes_(result.compute_records),
        stats_(stats),
        p_(p),
        events_(explain_endings(result, p)) {}

  std::vector<PathSegment> walk(int chip, double now) {
    chip_ = chip, now_ = now;
    std::size_t guard = records_.size() + computes_.size() + static_cast<std::size_t>(p_) + 1;
    while (now_ > tolerance(now_) && guard-- > 0 && step()) {
    }
    return std::move(backwards_);
  }

 private:
  // One segment back from chip_ at now_; false where the walk cannot go on (a download from a switch
  // no upload reached).
  bool step() {
    const auto& list = events_.ends[chip_];
    auto it = std::lower_bound(list.begin(), list.end(), now_ - tolerance(now_),
                               [](const Ending& e, double t) { return e.at < t; });
    const Ending* pick = preferred(it, list.end());
    PathSegment segment;
    segment.chip = chip_;
    if (!pick) {  // nothing ends here: back to the chip's previous event (or time 0)
      segment.kind = PathSegment::kUnattributed;
      segment.end = now_;
      segment.start = it == list.begin() ? 0.0 : std::prev(it)->at;
      backwards_.push_back(segment);
      now_ = segment.start;
      return true;
    }
    if (pick->priority == 1) {
      const ComputeRecord& c = computes_[pick->index];
      segment.kind = PathSegment::kCompute, segment.what = c.what, segment.start = c.start,
      segment.end = now_;
      backwards_.push_back(segment);
      now_ = c.start;
      return true;
    }
    const TransferRecord& r = records_[pick->index];
    add_flow(pick->index, now_);
    now_ = r.start;
    if (r.src >= 0) {
      chip_ = r.src;
      return true;
    }
    return follow_download(r);
  }

  // Of the events [from, to) that end at now_ on chip_, the one the walk takes (nullptr: none).
  const Ending* preferred(std::vector<Ending>::const_iterator from,
                          std::vector<Ending>::const_iterator to) const {
    const Ending* pick = nullptr;
    for (auto at = from; at != to && at->at <= now_ + tolerance(now_); ++at) {
      // Something that took time, or a delivery from another chip; the preferred kind, then the longest.
      const double start = at->priority == 1 ? computes_[at->index].start : records_[at->index].start;
      const bool moves = start < at->at || (at->priority == 0 && records_[at->index].src != chip_);
      if (!moves) continue;
      if (!pick || at->priority < pick->priority) pick = &*at;
    }
    return pick;
  }

  // Record i as a segment ending at `end`: a transfer to chip_ (or from a switch), else chip_'s send.
  void add_flow(std::size_t i, double end) {
    const TransferRecord& r = records_[i];
    PathSegment f;
    f.kind = r.dst == chip_ || r.src < 0 ? PathSegment::kTransfer : PathSegment::kSend;
    f.chip = r.dst >= 0 && f.kind == PathSegment::kTransfer ? r.dst : r.src;
    f.src = r.src, f.dst = r.dst, f.sw = r.sw, f.step = r.step;
    f.start = r.start, f.end = end, f.wire_end = r.wire_end;
    f.bound_by = stats_.flows[i].direction, f.bound_s = stats_.flows[i].bound_s;
    backwards_.push_back(f);
  }

  // A download `r` from a switch: it started when the reduction there ended, after the last upload
  // arrived; the walk goes on to that upload, through the switch's reduction time. False: no upload.
  bool follow_download(const TransferRecord& r) {
    const auto& ups = events_.uploads[{r.sw, r.step}];
    if (ups.empty()) return false;
    std::size_t last = ups.front();
    for (std::size_t i : ups)
      if (records_[i].end > records_[last].end) last = i;
    if (records_[last].end < now_ - tolerance(now_)) {  // the switch's reduction engine
      PathSegment reduce;
      reduce.kind = PathSegment::kCompute, reduce.chip = -1, reduce.sw = r.sw, reduce.step = r.step;
      reduce.what = "switch reduction", reduce.start = records_[last].end, reduce.end = now_;
      backwards_.push_back(reduce);
    }
    chip_ = records_[last].src;
    add_flow(last, std::min(now_, records_[last].end));
    now_ = records_[last].start;
    return true;
  }

  const std::vector<TransferRecord>& records_;
  const std::vector<ComputeRecord>& computes_;
  const LinkStats& stats_;
  int p_;
  ExplainEndings events_;
  int chip_ = 0;
  double now_ = 0;
  std::vector<PathSegment> backwards_;
};

// The critical path's totals (length, wire, latency, compute, unattributed) and the directions that
// bounded it, longest first.
void explain_path_totals(Explanation& why) {
  std::map<int, double> bound;
  for (const PathSegment& s : why.critical_path) {
    const double length = s.end - s.start;
    why.path_s += length;
    switch (s.kind) {
      case PathSegment::kTransfer:
      case PathSegment::kSend:
        why.wire_s += std::min(length, s.wire_end - s.start);
        why.latency_s += std::max(0.0, s.end - s.wire_end);
        if (s.bound_by >= 0) bound[s.bound_by] += s.bound_s;
        break;
      case PathSegment::kCompute:
        why.compute_s += length;
        break;
      case PathSegment::kUnattributed:
        why.unattributed_s += length;
        break;
    }
  }
  why.path_bound.assign(bound.begin(), bound.end());
  std::stable_sort(why.path_bound.begin(), why.path_bound.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
}

// Steps, by number: their span, bytes, and the flow delivered last.
std::vector<StepExplanation> explain_steps(const std::vector<TransferRecord>& records,
                                           const LinkStats& stats) {
  std::map<int, StepExplanation> steps;
  std::map<int, std::size_t> last;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (r.cancelled) continue;
    auto [at, fresh] = steps.try_emplace(r.step);
    StepExplanation& s = at->second;
    if (fresh) s.step = r.step, s.start = r.start, s.end = r.end, last[r.step] = i;
    s.start = std::min(s.start, r.start);
    if (r.end > s.end) s.end = r.end, last[r.step] = i;
    s.bytes += r.bytes, ++s.flows;
  }
  std::vector<StepExplanation> out;
  for (auto& [step, s] : steps) {
    const std::size_t i = last[step];
    const auto& r = records[i];
    s.last_src = r.src, s.last_dst = r.dst;
    s.wire_s = r.wire_end - r.start, s.latency_s = r.end - r.wire_end;
    s.bound_by = stats.flows[i].direction, s.bound_s = stats.flows[i].bound_s;
    out.push_back(s);
  }
  return out;
}

// Each chip's busy time: the union of its own flows' time on the wire and its computations.
std::vector<ChipWaiting> explain_chips(const SimResult& result) {
  const int p = static_cast<int>(result.chip_finish.size());
  std::vector<std::vector<std::pair<double, double>>> busy(p);
  for (const auto& r : result.transfer_records)
    if (r.wire_end > r.start && r.src >= 0 && r.src != r.dst) busy[r.src].emplace_back(r.start, r.wire_end);
  for (const auto& c : result.compute_records)
    if (c.end > c.start) busy[c.chip].emplace_back(c.start, c.end);
  std::vector<ChipWaiting> chips(p);
  for (int r = 0; r < p; ++r) {
    auto& intervals = busy[r];
    std::sort(intervals.begin(), intervals.end());
    const double finish = result.chip_finish[r];
    double covered = 0, reach = 0;
    for (auto [a, b] : intervals) {
      a = std::max(a, reach), b = std::min(b, finish);
      if (b > a) covered += b - a, reach = b;
    }
    chips[r] = ChipWaiting{finish, covered, std::max(0.0, finish - covered)};
  }
  return chips;
}

}  // namespace

Explanation explain_run(const SimResult& result, const LinkStats& stats) {
  const int p = static_cast<int>(result.chip_finish.size());
  Explanation why;
  // The walk, from the chip that finished last.
  for (int r = 0; r < p; ++r)
    if (result.chip_finish[r] > result.chip_finish[why.last_chip]) why.last_chip = r;
  const double end = p > 0 ? result.chip_finish[why.last_chip] : 0.0;
  const std::vector<PathSegment> backwards = ExplainWalk(result, stats, p).walk(why.last_chip, end);
  why.critical_path.assign(backwards.rbegin(), backwards.rend());
  explain_path_totals(why);
  why.steps = explain_steps(result.transfer_records, stats);
  why.chips = explain_chips(result);
  return why;
}

nlohmann::json explain_json(const Topology& t, const Explanation& why) {
  auto direction = [&](int d) {
    return d < 0 ? nlohmann::json() : nlohmann::json(LinkStats::direction_name(t, d));
  };
  static const char* kKinds[] = {"transfer", "send", "compute", "unattributed"};
  nlohmann::json path = nlohmann::json::array();
  for (const PathSegment& s : why.critical_path) {
    nlohmann::json one{{"kind", kKinds[s.kind]}, {"chip", s.chip}, {"start_s", s.start}, {"end_s", s.end}};
    if (s.sw >= 0) one["switch"] = t.node(t.switches()[s.sw]).name;
    if (s.kind == PathSegment::kTransfer || s.kind == PathSegment::kSend) {
      one["src"] = s.src, one["dst"] = s.dst, one["step"] = s.step, one["wire_end_s"] = s.wire_end;
      one["bound_by"] = direction(s.bound_by), one["bound_s"] = s.bound_s;
    }
    if (s.kind == PathSegment::kCompute) one["what"] = s.what;
    path.push_back(std::move(one));
  }
  nlohmann::json bound = nlohmann::json::array();
  for (const auto& [d, s] : why.path_bound) bound.push_back({{"direction", direction(d)}, {"bound_s", s}});
  nlohmann::json steps = nlohmann::json::array();
  for (const StepExplanation& s : why.steps)
    steps.push_back({{"step", s.step},
                     {"start_s", s.start},
                     {"end_s", s.end},
                     {"bytes", s.bytes},
                     {"flows", s.flows},
                     {"last_src", s.last_src},
                     {"last_dst", s.last_dst},
                     {"wire_s", s.wire_s},
                     {"latency_s", s.latency_s},
                     {"bound_by", direction(s.bound_by)},
                     {"bound_s", s.bound_s}});
  nlohmann::json chips = nlohmann::json::array();
  for (const ChipWaiting& c : why.chips)
    chips.push_back({{"finish_s", c.finish_s}, {"busy_s", c.busy_s}, {"wait_s", c.wait_s}});
  return {{"last_chip", why.last_chip},
          {"critical_path_s", why.path_s},
          {"critical_wire_s", why.wire_s},
          {"critical_latency_s", why.latency_s},
          {"critical_compute_s", why.compute_s},
          {"critical_unattributed_s", why.unattributed_s},
          {"critical_path", path},
          {"critical_bound_by", bound},
          {"steps", steps},
          {"chips", chips}};
}

std::string explain_text(const Topology& t, const Explanation& why, const LinkStats& stats) {
  std::ostringstream out;
  std::size_t transfers = 0;
  for (const PathSegment& s : why.critical_path)
    transfers += s.kind == PathSegment::kTransfer || s.kind == PathSegment::kSend;
  out << "# why: the critical path ends at " << t.node(t.chip(why.last_chip)).name << " after "
      << us(why.path_s) << ": " << transfers << " transfer(s), " << us(why.wire_s) << " on the wire + "
      << us(why.latency_s) << " latency; compute " << us(why.compute_s);
  if (why.unattributed_s > 0) out << "; unattributed " << us(why.unattributed_s);
  out << "\n";
  if (!why.path_bound.empty()) {
    out << "#   bounded by:";
    for (std::size_t k = 0; k < why.path_bound.size() && k < 3; ++k)
      out << (k ? "," : "") << " " << LinkStats::direction_name(t, why.path_bound[k].first) << " "
          << us(why.path_bound[k].second) << " ("
          << pct(why.path_s > 0 ? why.path_bound[k].second / why.path_s : 0) << ")";
    out << "\n";
  }
  out << "#   tiers (mean/peak utilisation):";
  for (const TierLoad& tier : stats.tiers)
    out << " " << tier.tier << " " << pct(tier.mean_util) << "/" << pct(tier.peak_util);
  out << "\n";
  if (!stats.hot.empty()) {
    out << "#   hottest links (mean/peak):";
    for (std::size_t k = 0; k < stats.hot.size() && k < 3; ++k) {
      const auto& d = stats.directions[stats.hot[k]];
      out << (k ? "," : "") << " " << LinkStats::direction_name(t, stats.hot[k]) << " " << pct(d.mean_util)
          << "/" << pct(d.peak_util);
    }
    out << "\n";
  }
  if (!why.steps.empty()) {
    std::vector<const StepExplanation*> longest;
    for (const auto& s : why.steps) longest.push_back(&s);
    std::stable_sort(longest.begin(), longest.end(),
                     [](const auto* a, const auto* b) { return a->end - a->start > b->end - b->start; });
    out << "#   longest steps:";
    for (std::size_t k = 0; k < longest.size() && k < 3; ++k) {
      const auto& s = *longest[k];
      out << (k ? ";" : "") << " step " << s.step << " " << us(s.end - s.start) << " ("
          << (s.last_src < 0 ? std::string("switch") : "chip" + std::to_string(s.last_src)) << "->"
          << (s.last_dst < 0 ? std::string("switch") : "chip" + std::to_string(s.last_dst)) << " last, "
          << (s.bound_by >= 0 ? "bound by " + LinkStats::direction_name(t, s.bound_by)
                              : std::string("latency only"))
          << ")";
    }
    out << "\n";
  }
  if (!why.chips.empty()) {
    std::size_t most = 0, least = 0;
    double total = 0;
    for (std::size_t r = 0; r < why.chips.size(); ++r) {
      if (why.chips[r].wait_s > why.chips[most].wait_s) most = r;
      if (why.chips[r].wait_s < why.chips[least].wait_s) least = r;
      total += why.chips[r].wait_s;
    }
    out << "#   waiting: " << t.node(t.chip(static_cast<int>(most))).name << " " << us(why.chips[most].wait_s)
        << " (most), " << t.node(t.chip(static_cast<int>(least))).name << " " << us(why.chips[least].wait_s)
        << " (least), mean " << us(total / static_cast<double>(why.chips.size())) << "\n";
  }
  return out.str();
}

}  // namespace ultrasim
