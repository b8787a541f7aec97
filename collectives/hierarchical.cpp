// Hierarchical collectives (NCCL's and MPI's two-level schemes; e.g. Jeaugey, "Massively scale your deep
// learning training with NCCL 2.4", 2019, and the 2D all-reduce of Ying et al., "Image classification at
// supercomputer scale", 2018): chips form groups (a server, a rack, or N consecutive ranks) and columns
// pair the chips across groups (groups.hpp). Slot s of the buffer is chip s's part; a chip owns a column
// c when it is its group's member c mod |group|.
//   reduce-scatter: inner  — inside every group, reduce-scatter so each member holds its group's sum of
//                            the parts of the columns it owns;
//                   outer  — for every column, reduce-scatter among its owners (one per group), so chip
//                            s ends with the full sum of part s.
//   all-gather:     outer  — for every column, all-gather among its owners;
//                   inner  — inside every group, all-gather of what each member gathered.
//   all-reduce:     inner reduce-scatter, outer reduce-scatter, outer all-gather, inner all-gather
//                   (an outer all-reduce between the two inner phases).
// Each phase is a ring (p_g - 1 steps) or direct (one step) exchange, chosen by `inner` and `outer`.
// A chip of a smaller group owns several columns and runs them one after the other.
// On a group of chips (communicator, --groups) the group's members split by their own levels
// (Transport::chip_of, CostInput::chip): members of one server (rack, domain) run the inner phases, the
// outer phases pair them across servers, as on a topology of just those chips; a group inside one server
// is one group, its outer phases empty, and runs as the inner exchange alone (rings: the ring's time).
// model_s: the phases back to back, each timed at its slowest chip: ring phases on per-chip clocks
// (rounds_time), direct phases by their busiest link (concurrent_flows_time) plus the largest
// reduction. With G equal groups of g chips, rings, on a switch: 2(g-1)(α + n/(gβ)) + 2(G-1)(α + n/(pβ))
// (plus reductions), which the simulation meets exactly on switch:N (each step one flow per link
// direction). On trn3 with groups=server the outer rings share forwarded cross-rack links.
#include "collectives/hierarchical.hpp"

#include <memory>
#include <mutex>

#include "collectives/group_exchange.hpp"
#include "topology/base/errors.hpp"

namespace ultrasim {
namespace {

class Hierarchical : public Algorithm {
 public:
  Hierarchical(std::vector<HierarchicalPhase> phases, std::string groups, bool inner_ring, bool outer_ring)
      : phases_(std::move(phases)),
        groups_(std::move(groups)),
        inner_ring_(inner_ring),
        outer_ring_(outer_ring) {}
  void place(const Topology& topology) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    labels_ = level_labels(groups_, topology);
    plan_.reset();
  }

  void run(Chip& me) const override {
    const Transport& transport = me.transport();
    const std::shared_ptr<const ExchangePlan> plan =
        shared_plan(me.size(), [&](int r) { return transport.chip_of(r); });
    for (std::size_t ph = 0; ph < phases_.size(); ++ph) {
      auto [op, inner] = phases_[ph];
      run_exchanges(me, plan->of(inner, me.rank()), op, inner ? inner_ring_ : outer_ring_,
                    static_cast<int>(ph) * me.size());
    }
  }

  double model_s(const CostInput& in) const override {
    Groups g = groups(in.p, [&](int r) { return in.chip(r); });
    auto parts = even_chunks(in.bytes, in.p);
    double total = 0;
    for (auto [op, inner] : phases_)
      total += exchanges_time(in, inner ? inner_exchanges(g) : outer_exchanges(g), op,
                              inner ? inner_ring_ : outer_ring_, parts);
    return total;
  }

 private:
  // The groups of the p ranks whose chips are chip(0..p-1): on a group of chips (communicator), its
  // members split by their own levels.
  Groups groups(int p, const std::function<int(int)>& chip) const {
    return make_groups(groups_, p, member_labels(labels_, p, chip));
  }
  // The exchanges of every group and column, built by the first chip to run and shared by the others
  // while the ranks' chips are the same (chips may run on threads: the recording fake).
  std::shared_ptr<const ExchangePlan> shared_plan(int p, const std::function<int(int)>& chip) const {
    std::vector<int> chips(p);
    for (int r = 0; r < p; ++r) chips[r] = chip(r);
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!plan_ || plan_chips_ != chips) {
      plan_ = std::make_shared<const ExchangePlan>(groups(p, chip));
      plan_chips_ = std::move(chips);
    }
    return plan_;
  }
  std::vector<HierarchicalPhase> phases_;
  std::string groups_;
  bool inner_ring_, outer_ring_;
  std::vector<int> labels_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const ExchangePlan> plan_;
  mutable std::vector<int> plan_chips_;  // the chip of each rank plan_ was built for
};

// The hierarchical entries' parameters: the groups, and the exchange inside and across them.
struct HierarchicalParams {
  GroupsParams grouping;
  std::string inner = "ring", outer = "ring";  // ring | direct
};
const ParamTable<HierarchicalParams>& hierarchical_table() {
  static const ParamTable<HierarchicalParams> table =
      ParamTable<HierarchicalParams>{}
          .nest(groups_table(), &HierarchicalParams::grouping)
          .add({"inner",
                "ring",
                Unit::kChoice,
                "exchange inside a group: ring (g-1 steps) or direct (one step)",
                "NCCL: ring inside a node",
                {"ring", "direct"}},
               &HierarchicalParams::inner)
          .add({"outer",
                "ring",
                Unit::kChoice,
                "exchange across groups: ring or direct",
                "NCCL: ring across nodes",
                {"ring", "direct"}},
               &HierarchicalParams::outer);
  return table;
}

AlgorithmEntry hierarchical(const std::string& collective, const std::string& description,
                            std::vector<HierarchicalPhase> phases) {
  return {collective,
          "hierarchical",
          description,
          [phases](const ParamSet& params) {
            const HierarchicalParams h = hierarchical_table().read(params);
            return std::make_unique<Hierarchical>(phases, h.grouping.groups, h.inner == "ring",
                                                  h.outer == "ring");
          },
          hierarchical_table().specs(),
          /*posts_to_all=*/true};
}

}  // namespace

std::unique_ptr<Algorithm> make_hierarchical(std::vector<HierarchicalPhase> phases, std::string groups,
                                             bool inner_ring, bool outer_ring) {
  return std::make_unique<Hierarchical>(std::move(phases), std::move(groups), inner_ring, outer_ring);
}

AlgorithmEntry hierarchical_allreduce() {
  return hierarchical("allreduce", "reduce-scatter in groups, all-reduce across groups, all-gather in groups",
                      {{HierarchicalOp::kReduceScatter, true},
                       {HierarchicalOp::kReduceScatter, false},
                       {HierarchicalOp::kAllGather, false},
                       {HierarchicalOp::kAllGather, true}});
}
AlgorithmEntry hierarchical_reducescatter() {
  return hierarchical("reducescatter", "reduce-scatter in groups, then across groups",
                      {{HierarchicalOp::kReduceScatter, true}, {HierarchicalOp::kReduceScatter, false}});
}
AlgorithmEntry hierarchical_allgather() {
  return hierarchical("allgather", "all-gather across groups, then in groups",
                      {{HierarchicalOp::kAllGather, false}, {HierarchicalOp::kAllGather, true}});
}

}  // namespace ultrasim
