// The flows' end times, earliest first: an indexed 4-ary min-heap of (end, flow id) with each flow's
// position kept beside it, so that re-dating a flow is a sift in place. Boost.Heap's mutable d-ary heap
// (used before) keeps its handles in a std::list, one allocation per push: 10 % of a 576-chip all-to-all.
// Entries order by end, then by id, so that equal ends come out in a fixed order.
// Free of SimGrid; tested against an ordered set (test/sim/engines/flow/end_heap_test.cpp).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace ultrasim {

class EndHeap {
 public:
  using Entry = std::pair<double, int>;  // (end, flow id); ids are small non-negative integers

  bool empty() const { return heap_.empty(); }
  const Entry& top() const { return heap_.front(); }
  bool contains(int id) const {
    return static_cast<std::size_t>(id) < position_.size() && position_[id] != kAbsent;
  }

  // Adds flow `id` (not in the heap) with end `end`.
  void push(int id, double end) {
    if (position_.size() <= static_cast<std::size_t>(id)) position_.resize(id + 1, kAbsent);
    heap_.emplace_back(end, id);
    position_[id] = heap_.size() - 1;
    sift_up(heap_.size() - 1);
  }
  // Moves flow `id` (in the heap) to end `end`.
  void update(int id, double end) {
    const std::size_t at = position_[id];
    const bool earlier = Entry{end, id} < heap_[at];
    heap_[at].first = end;
    if (earlier)
      sift_up(at);
    else
      sift_down(at);
  }
  void pop() {
    position_[heap_.front().second] = kAbsent;
    if (heap_.size() > 1) {
      heap_.front() = heap_.back();
      position_[heap_.front().second] = 0;
    }
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
  }

 private:
  static constexpr std::size_t kArity = 4;
  static constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);

  void place(std::size_t at, const Entry& e) {
    heap_[at] = e;
    position_[e.second] = at;
  }
  void sift_up(std::size_t at) {
    const Entry moving = heap_[at];
    while (at > 0) {
      const std::size_t parent = (at - 1) / kArity;
      if (!(moving < heap_[parent])) break;
      place(at, heap_[parent]);
      at = parent;
    }
    place(at, moving);
  }
  void sift_down(std::size_t at) {
    const Entry moving = heap_[at];
    for (;;) {
      const std::size_t first = at * kArity + 1;
      if (first >= heap_.size()) break;
      std::size_t least = first;
      for (std::size_t c = first + 1; c < first + kArity && c < heap_.size(); ++c)
        if (heap_[c] < heap_[least]) least = c;
      if (!(heap_[least] < moving)) break;
      place(at, heap_[least]);
      at = least;
    }
    place(at, moving);
  }

  std::vector<Entry> heap_;
  std::vector<std::size_t> position_;  // by flow id: its index in heap_, or kAbsent
};

}  // namespace ultrasim
