// Double-binary-tree all-reduce (Sanders, Speck & Träff, "Two-tree algorithms for full bandwidth
// broadcast, reduction and scan", Parallel Computing 35(12), 2009; NCCL 2.4's double binary tree,
// Jeaugey 2019). The trees, their colouring and the rounds are in double_binary_tree.hpp.
//   tree t carries half t of the buffer in C = pipeline_chunks chunks (slots tC .. tC+C-1);
//   1. reduce: each chip adds chunk c of its children in the tree and sends the sum to its parent;
//   2. broadcast: from the roots back down, each chip keeping what arrives and passing it on.
//   A chip makes its sends in the schedule's round order, each as soon as it holds what it carries and
//   its previous send has left: one flow at a time on its uplink, no barrier between rounds.
// model_s: that program on the α-β clock (alpha_beta_clock.hpp: a send takes bytes/β and arrives α
// later; adding a chunk costs bytes/R). Textbook (Sanders et al.: 2⌈log2 p⌉ + 2C rounds per phase, each
// α + n/(2Cβ)):
//   T ≈ 2n/β + 2⌈log2 p⌉ n/(Cβ) + 4(C + ⌈log2 p⌉)α,
// twice a ring's bandwidth term n/β (each chip sends the buffer up and down once) in exchange for
// logarithmic depth. model_s is lower than the textbook at small sizes (a chip does not wait a round's α
// for data it does not carry). It is a lower bound of the simulation, exact only for p <= 2: a chip's two
// children (reduce) and its two parents (broadcast) do not wait for each other, so their chunks meet on
// the chip's downlink (on switch:144 at 64 MiB the simulation takes 1.5x model_s; collectives/README.md).
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "collectives/alpha_beta_clock.hpp"
#include "collectives/double_binary_tree.hpp"

namespace ultrasim {
namespace {

// The schedule and, per chip, the transfers it sends and receives (indices into it, in schedule order),
// so that a chip's program visits only its own.
struct TreePlan {
  std::vector<TreeTransfer> transfers;
  std::vector<std::vector<int>> sends, receives;
};

TreePlan make_plan(int p, int chunks) {
  TreePlan plan{two_tree_schedule(p, chunks), std::vector<std::vector<int>>(p),
                std::vector<std::vector<int>>(p)};
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    plan.sends[plan.transfers[i].src].push_back(static_cast<int>(i));
    plan.receives[plan.transfers[i].dst].push_back(static_cast<int>(i));
  }
  return plan;
}

class DoubleBinaryTreeAllreduce : public Algorithm {
 public:
  explicit DoubleBinaryTreeAllreduce(int chunks) : chunks_(chunks) {}
  int chunks(int) const override { return 2 * chunks_; }
  // Each send waits only for what it carries and for the chip's previous send to have left (one flow
  // at a time on the chip's uplink); the chip adds or keeps each chunk when it first needs it.
  void run(Chip& me) const override {
    const auto plan = schedule(me.size());
    TreeInbox inbox(me, plan->transfers);
    RequestPtr previous;
    for (int i : plan->sends[me.rank()]) {
      const TreeTransfer& t = plan->transfers[i];
      for (int n : t.needs) inbox.take(n);
      if (previous) me.wait({previous});
      previous = me.send(t.dst, t.round, {t.slot});
    }
    for (int i : plan->receives[me.rank()]) inbox.take(i);
    if (previous) me.wait({previous});
  }
  // This program on the α-β clock.
  double model_s(const CostInput& in) const override {
    return alpha_beta_time(*this, CollectiveKind::kAllreduce, in);
  }

 private:
  // The schedule for p chips, computed once and shared by every chip's program (a copy per chip would
  // hold 144 x 147k transfers at 256 chunks per tree).
  std::shared_ptr<const TreePlan> schedule(int p) const {
    std::lock_guard lock(mutex_);
    auto& cached = schedules_[p];
    if (!cached) cached = std::make_shared<const TreePlan>(make_plan(p, chunks_));
    return cached;
  }
  int chunks_;
  mutable std::mutex mutex_;  // the recording fake runs chips on threads
  mutable std::map<int, std::shared_ptr<const TreePlan>> schedules_;
};

// Its pipelining parameter: pipeline_chunks, chunks each tree's half is cut into, default 16.
const ParamTable<PipelineParams>& tree_pipeline_table() {
  static const ParamTable<PipelineParams> table = ParamTable<PipelineParams>{}.add(
      {"pipeline_chunks",
       "16",
       Unit::kCount,
       "chunks each tree's half of the buffer is cut into",
       "assumption: on trn3, 16 keeps 1 MiB near the 4-chunk latency (61 vs 52 us) and 1 GiB near 64 "
       "chunks' bandwidth (19.5 vs 17.4 ms)",
       {},
       kPipelineChunks},
      &PipelineParams::chunks);
  return table;
}

}  // namespace

AlgorithmEntry double_binary_tree_allreduce() {
  return {"allreduce", "double-binary-tree",
          "two binary trees, each reducing then broadcasting half the buffer in pipeline_chunks chunks",
          [](const ParamSet& p) {
            return std::make_unique<DoubleBinaryTreeAllreduce>(tree_pipeline_table().read(p).chunks);
          },
          tree_pipeline_table().specs()};
}

}  // namespace ultrasim
