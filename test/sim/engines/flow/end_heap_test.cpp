// sim/engines/flow/end_heap.hpp: the flows' end times come out earliest first, ties by id, through any mix of
// pushes, re-datings and pops.
#include <catch2/catch.hpp>

#include <random>
#include <set>

#include "sim/engines/flow/end_heap.hpp"

using namespace ultrasim;

TEST_CASE(
    "the end heap gives what an ordered set of (end, id) gives, through random pushes, updates and pops") {
  std::mt19937 rng(7);
  EndHeap heap;
  std::set<EndHeap::Entry> reference;
  std::vector<double> end(500, -1);  // by id: its end while in the heap, else -1
  std::uniform_int_distribution<int> pick(0, 499), op(0, 9);
  // Ends on a coarse grid, so that many are equal and the order of ties is exercised.
  std::uniform_int_distribution<int> grid(0, 50);
  for (int step = 0; step < 20000; ++step) {
    const int id = pick(rng);
    const double t = grid(rng) * 0.5;
    const int what = op(rng);
    if (what < 4 && end[id] < 0) {
      heap.push(id, t);
      reference.emplace(t, id);
      end[id] = t;
    } else if (what < 8 && end[id] >= 0) {
      heap.update(id, t);
      reference.erase({end[id], id});
      reference.emplace(t, id);
      end[id] = t;
    } else if (!reference.empty()) {
      REQUIRE(heap.top() == *reference.begin());
      end[heap.top().second] = -1;
      reference.erase(reference.begin());
      heap.pop();
    }
    REQUIRE(heap.empty() == reference.empty());
    if (!reference.empty()) REQUIRE(heap.top() == *reference.begin());
    REQUIRE(heap.contains(id) == (end[id] >= 0));
  }
  while (!reference.empty()) {
    REQUIRE(heap.top() == *reference.begin());
    reference.erase(reference.begin());
    heap.pop();
  }
  CHECK(heap.empty());
}
