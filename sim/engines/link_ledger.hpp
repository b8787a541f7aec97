// The contention-free engine's proof: which flows used each link direction and when. If no two flows
// of one link direction overlap in time, every flow had its whole path to itself and max-min sharing gave
// it exactly its bottleneck rate (sim/engines/contention_free/uncontended.hpp). Free of SimGrid; unit-tested
// on its own.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace ultrasim {

// Two flows of one link direction that overlap by less than this many seconds (relative to the time,
// past one second) are rounding (one instant computed along two chains), not sharing: sharing for that
// long moves no time by more than the overlap itself.
inline constexpr double kOverlapTolerance = 1e-12;

// One flow's life on the wire: it holds every link of its path from start to end.
struct FlowSpan {
  double start = 0, end = 0;
  int src = 0, dst = 0;
};

// The flows that used each link direction, checked as they arrive: a flow that starts before the last
// one there ended overlaps it (contention) or lies wholly before it (posted out of time order: checked
// at the end, after sorting). A flow's span is stored once, each direction it crosses holds its index.
class LinkLedger {
 public:
  explicit LinkLedger(std::size_t link_count) : used_(2 * link_count), unsorted_(2 * link_count, 0) {}

  // Records flow `f` (an index into flows()) on a link direction; false when it overlaps the last flow
  // recorded there.
  bool add(int link, bool up, std::uint32_t f) {
    const std::size_t d = 2 * static_cast<std::size_t>(link) + (up ? 0 : 1);
    auto& list = used_[d];
    if (!list.empty()) {
      const FlowSpan &last = flows_[list.back()], &now = flows_[f];
      if (now.start < last.end - tolerance(now)) {
        if (now.end > last.start + tolerance(now)) {
          clash_ = {d, list.back(), f};
          return false;
        }
        unsorted_[d] = 1;
      }
    }
    list.push_back(f);
    return true;
  }

  // After the run: false if a direction that received flows out of time order holds two overlapping.
  bool check_unsorted() {
    for (std::size_t d = 0; d < used_.size(); ++d) {
      if (!unsorted_[d]) continue;
      auto& list = used_[d];
      std::sort(list.begin(), list.end(),
                [this](std::uint32_t a, std::uint32_t b) { return flows_[a].start < flows_[b].start; });
      std::uint32_t furthest = list.front();  // the flow reaching furthest so far
      for (std::size_t i = 1; i < list.size(); ++i) {
        const FlowSpan& next = flows_[list[i]];
        if (next.start < flows_[furthest].end - tolerance(next)) {
          clash_ = {d, furthest, list[i]};
          return false;
        }
        if (next.end > flows_[furthest].end) furthest = list[i];
      }
    }
    return true;
  }

  std::deque<FlowSpan>& flows() { return flows_; }
  struct Clash {
    std::size_t direction = 0;
    std::uint32_t first = 0, second = 0;
  };
  const Clash& clash() const { return clash_; }
  const FlowSpan& flow(std::uint32_t f) const { return flows_[f]; }

 private:
  static double tolerance(const FlowSpan& f) { return kOverlapTolerance * std::max(1.0, f.end); }

  std::deque<FlowSpan> flows_;                    // a deque: growing never copies what it holds
  std::vector<std::vector<std::uint32_t>> used_;  // per link direction: 2 x link (+1 for b -> a)
  std::vector<char> unsorted_;
  Clash clash_;
};

}  // namespace ultrasim
