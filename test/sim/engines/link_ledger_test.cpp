// The contention-free engine's proof obligation: a link direction may carry flows one after another,
// touching, in any posting order, but never two at once.
#include <catch2/catch.hpp>

#include "sim/engines/link_ledger.hpp"

using namespace ultrasim;

namespace {

// Adds a flow [start, end) on link 0, direction up; returns add()'s verdict.
bool add(LinkLedger& ledger, double start, double end) {
  auto& flows = ledger.flows();
  flows.push_back(FlowSpan{start, end, 0, 1});
  return ledger.add(0, true, static_cast<std::uint32_t>(flows.size() - 1));
}

}  // namespace

TEST_CASE("flows one after another on a link direction, touching or apart, are contention-free") {
  LinkLedger ledger(1);
  CHECK(add(ledger, 0, 1e-3));
  CHECK(add(ledger, 1e-3, 2e-3));  // starts as the last one ends
  CHECK(add(ledger, 5e-3, 6e-3));
  CHECK(ledger.check_unsorted());
}

TEST_CASE("a flow that starts before the last one on its link direction ended is contention") {
  LinkLedger ledger(1);
  CHECK(add(ledger, 0, 1e-3));
  CHECK_FALSE(add(ledger, 0.5e-3, 2e-3));
  CHECK(ledger.clash().direction == 0);
  CHECK(ledger.clash().first == 0);
  CHECK(ledger.clash().second == 1);
}

TEST_CASE("the two directions of a link and different links are separate resources") {
  LinkLedger ledger(2);
  auto& flows = ledger.flows();
  flows = {{0, 1e-3, 0, 1}, {0, 1e-3, 1, 0}, {0, 1e-3, 2, 3}};
  CHECK(ledger.add(0, true, 0));
  CHECK(ledger.add(0, false, 1));
  CHECK(ledger.add(1, true, 2));
  CHECK(ledger.check_unsorted());
}

TEST_CASE("flows posted out of time order are checked against every earlier flow once sorted") {
  SECTION("disjoint: contention-free") {
    LinkLedger ledger(1);
    CHECK(add(ledger, 4e-3, 5e-3));
    CHECK(add(ledger, 0, 1e-3));     // wholly before the last: accepted for now
    CHECK(add(ledger, 2e-3, 3e-3));  // overlaps neither neighbour once sorted
    CHECK(ledger.check_unsorted());
  }
  SECTION("overlapping a flow that is not the last one posted: contention, found after sorting") {
    LinkLedger ledger(1);
    CHECK(add(ledger, 4e-3, 5e-3));
    CHECK(add(ledger, 0, 2e-3));
    CHECK(add(ledger, 6e-3, 7e-3));
    CHECK(add(ledger, 1e-3, 1.5e-3));  // wholly before the last (6-7 ms), but inside 0-2 ms
    CHECK_FALSE(ledger.check_unsorted());
    CHECK(ledger.flows()[ledger.clash().first].end == 2e-3);
    CHECK(ledger.flows()[ledger.clash().second].start == 1e-3);
  }
}

TEST_CASE("an overlap shorter than the tolerance is rounding, not contention") {
  LinkLedger ledger(1);
  CHECK(add(ledger, 0, 1e-3));
  CHECK(add(ledger, 1e-3 - 0.5e-12, 2e-3));      // 0.5 ps of overlap: one instant computed two ways
  CHECK_FALSE(add(ledger, 2e-3 - 2e-12, 3e-3));  // 2 ps: sharing
}
