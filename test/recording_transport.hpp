// A recording fake of the Transport: runs an algorithm on p threads (one per chip) with no SimGrid,
// delivers messages in order, and records every transfer. Algorithms are unit-tested against it:
// which chip sent what to whom in which step, and whether the semantic result is right.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "collectives/algorithm.hpp"

namespace ultrasim::test {

struct Sent {
  int src = 0, dst = 0, step = 0;  // an in-switch reduction's switch k appears as -1-k
  std::uint64_t bytes = 0;
  bool operator<(const Sent& o) const {
    return std::tie(step, src, dst, bytes) < std::tie(o.step, o.src, o.dst, o.bytes);
  }
};

struct FakeRun {
  std::vector<Sent> sent;  // sorted by (step, src, dst)
  std::vector<std::vector<Contribution>> finals;
  Verdict verdict;
  std::vector<double> compute_seconds;  // per chip
  std::uint64_t bytes_sent_by(int chip) const;
  int steps() const;  // distinct step labels
};

// Runs `algorithm` for `kind` over p chips and `bytes`; fails the test if a receive waits more than a
// few seconds (a deadlocked schedule). An alltoallv runs the uniform matrix of `bytes`.
FakeRun run_on_fake(const Algorithm& algorithm, CollectiveKind kind, int p, std::uint64_t bytes,
                    std::optional<double> reduce_bandwidth = std::nullopt);
// Runs `algorithm` as an alltoallv of `traffic` over traffic.p() chips.
FakeRun run_on_fake(const Algorithm& algorithm, const TrafficMatrix& traffic);

}  // namespace ultrasim::test
