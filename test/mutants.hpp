// Test-only broken algorithms: each fails in a way a fast-but-wrong schedule would, so tests can show
// that verification and the run driver catch it.
#pragma once

#include "collectives/algorithm.hpp"
#include "collectives/direct_phases.hpp"
#include "collectives/double_binary_tree.hpp"
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

// Recursive doubling on 6 chips (p' = 4) that never sends the result back to the folded chips 0 and 2.
class SkipsUnfold : public Algorithm {
 public:
  int chunks(int) const override { return 1; }
  void run(Chip& me) const override {
    const int r = me.rank();
    int v = r >= 4 ? r - 2 : (r % 2 == 1 ? r / 2 : -1);
    auto chip_of = [](int x) { return x < 2 ? 2 * x + 1 : x + 2; };
    if (r < 4 && r % 2 == 0) me.wait({me.send(r + 1, 0, {0})});
    if (r < 4 && r % 2 == 1) {
      auto in = me.recv(r - 1, 0);
      me.wait({in});
      me.reduce(in);
    }
    for (int mask = 1, step = 1; mask < 4 && v >= 0; mask <<= 1, ++step) {
      auto out = me.send(chip_of(v ^ mask), step, {0});
      auto in = me.recv(chip_of(v ^ mask), step);
      me.wait({out, in});
      me.reduce(in);
    }
  }
  double model_s(const CostInput&) const override { return 0; }
};

// Direct all-gather whose chips keep every chunk but the one from their left neighbour.
class DropsOneChunk : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    std::vector<RequestPtr> received, all;
    for (int k = 1; k < p; ++k) received.push_back(me.recv((r + p - k) % p, 0));
    all = received;
    for (int k = 1; k < p; ++k) all.push_back(me.send((r + k) % p, 0, {r}));
    me.wait(all);
    for (std::size_t i = 1; i < received.size(); ++i) me.copy(received[i]);  // drops received[0]
  }
  double model_s(const CostInput&) const override { return 0; }
};

// Pairwise all-to-all whose parts land in the sender's own index instead of the receiver's slot p+src.
class WrongSlot : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    me.copy_local(r, p + r);
    for (int k = 1; k < p; ++k) {
      int dst = (r + k) % p;
      auto out = me.send_to(dst, k, dst, p + dst);
      auto in = me.recv((r + p - k) % p, k);
      me.wait({out, in});
      me.copy(in);
    }
  }
  double model_s(const CostInput&) const override { return 0; }
};

// Bruck all-to-all that skips the inverse rotation: index i (the part from chip r-i) stays in slot p+i.
class SkipsInverseRotation : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    for (int j = 0; j < p; ++j) me.copy_local(j, p + j);
    for (int i = 0; i < p; ++i) me.copy_local(p + (r + i) % p, i);
    for (int k = 0; (1 << k) < p; ++k) {
      std::vector<int> moving;
      for (int i = 0; i < p; ++i)
        if (i & (1 << k)) moving.push_back(i);
      auto out = me.send((r + (1 << k)) % p, k, moving);
      auto in = me.recv((r + p - (1 << k)) % p, k);
      me.wait({out, in});
      me.copy(in);
    }
    for (int i = 0; i < p; ++i) me.copy_local(i, p + i);
  }
  double model_s(const CostInput&) const override { return 0; }
};

// Ring-relay all-to-all that stops one step early: nobody receives the part from its right neighbour
// (chip r-(p-1)), which needs all p-1 hops.
class RelaysOneStepShort : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    me.copy_local(r, p + r);
    for (int s = 1; s < p - 1; ++s) {
      std::vector<int> onward;
      for (int j = 1; j <= p - s; ++j) onward.push_back((r + j) % p);
      auto out = me.send((r + 1) % p, s, onward);
      auto in = me.recv((r + p - 1) % p, s);
      me.wait({out, in});
      me.copy(in);
      me.copy_local(r, p + (r + p - s) % p);
    }
  }
  double model_s(const CostInput&) const override { return 0; }
};

// Binomial broadcast from chip 0 where chip 1 receives the buffer but drops it.
class ForgetsAChild : public Algorithm {
 public:
  int chunks(int) const override { return 1; }
  void run(Chip& me) const override {
    const int p = me.size(), v = me.rank();
    int mask = 1;
    while (mask < p && !(v & mask)) mask <<= 1;
    if (v != 0) {
      auto in = me.recv(v - mask, mask);
      me.wait({in});
      if (v != 1) me.copy(in);
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
      if (v + mask < p) me.wait({me.send(v + mask, mask, {0})});
  }
  double model_s(const CostInput&) const override { return 0; }
};

// Direct all-to-allv that sends and receives every non-zero part but never copies its own (the diagonal).
class ForgetsOwnPart : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    std::vector<RequestPtr> received, all;
    for (int s = 0; s < p; ++s)
      if (s != r && me.slot_bytes(p + s) > 0) received.push_back(me.recv(s, 0));
    all = received;
    for (int d = 0; d < p; ++d)
      if (d != r && me.slot_bytes(d) > 0) all.push_back(me.send_to(d, 0, d, p + r));
    me.wait(all);
    for (const auto& in : received) me.copy(in);
  }
  double model_s(const CostInput&) const override { return 0; }
};

// Double binary tree whose chips pass a chunk up as soon as it holds its first child's part, without
// waiting for the second child's (the pipelining bug of a missing dependency). 4 chunks per tree.
class SendsBeforeSecondChild : public Algorithm {
 public:
  int chunks(int) const override { return 2 * 4; }
  void run(Chip& me) const override {
    const auto transfers = two_tree_schedule(me.size(), 4);
    TreeInbox inbox(me, transfers);
    for (const TreeTransfer& t : transfers) {
      if (t.src != me.rank()) continue;
      if (!t.needs.empty()) inbox.take(t.reduce ? t.needs.front() : t.needs.back());  // the bug: one of two
      for (int i : t.needs)
        if (!t.reduce) inbox.take(i);
      me.wait({me.send(t.dst, t.round, {t.slot})});
    }
    for (std::size_t i = 0; i < transfers.size(); ++i)
      if (transfers[i].dst == me.rank()) inbox.take(static_cast<int>(i));
  }
  double model_s(const CostInput&) const override { return 0; }
};

// In-switch all-reduce (one switch, one slice) that asks the switch for every slot but the last: every
// chip keeps only its own contribution there.
class ForgetsLastSlot : public Algorithm {
 public:
  void run(Chip& me) const override {
    std::vector<int> members = slot_range(0, me.size()), all = slot_range(0, me.size()), wants = all;
    wants.pop_back();
    auto requests = me.switch_reduce(0, members, 0, all, wants);
    me.wait({requests.sent, requests.result});
    me.copy(requests.result);
  }
  double model_s(const CostInput&) const override { return 0; }
};

}  // namespace ultrasim::test
