// Test-only broken algorithms: each fails in a way a fast-but-wrong schedule would, so tests can show
// that verification and the run driver catch it.
#pragma once

#include "collectives/algorithm.hpp"
#include "collectives/ring_pass.hpp"

namespace ultrasim::test {

// Ring all-reduce that stops one all-gather step early: every chip misses exactly one chunk.
class SkipsLastStep : public Algorithm {
 public:
  void run(Chip& me) const override {
    ring_pass(me, 0, 0, OnArrival::kReduce);
    const int p = me.size(), r = me.rank();
    for (int s = 0; s < p - 2; ++s) {
      auto sent = me.send((r + 1) % p, p - 1 + s, {((r + 1 - s) % p + p) % p});
      auto received = me.recv((r + p - 1) % p, p - 1 + s);
      me.wait({sent, received});
      me.copy(received);
    }
  }
  double model_s(const CostInput&) const override { return 0; }
};

// Ring all-reduce that adds the first received chunk twice, then carries on as if nothing happened.
class ReducesTwice : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    auto sent = me.send((r + 1) % p, 0, {r});
    auto received = me.recv((r + p - 1) % p, 0);
    me.wait({sent, received});
    me.reduce(received);
    me.reduce(received);
    ring_pass(me, 1, -1, OnArrival::kReduce);
    ring_pass(me, p, 1, OnArrival::kKeep);
  }
  double model_s(const CostInput&) const override { return 0; }
};

// Chip 0 waits for a message nobody sends.
class WaitsForever : public Algorithm {
 public:
  void run(Chip& me) const override {
    if (me.rank() == 0) me.wait({me.recv(1, 99)});
  }
  double model_s(const CostInput&) const override { return 0; }
};

}  // namespace ultrasim::test
