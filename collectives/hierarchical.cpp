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
// model_s: the phases back to back, each timed at its slowest chip: ring phases on per-chip clocks
// (rounds_time), direct phases by their busiest link (concurrent_flows_time) plus the largest
// reduction. With G equal groups of g chips, rings, on a switch: 2(g-1)(α + n/(gβ)) + 2(G-1)(α + n/(pβ))
// (plus reductions), which the simulation meets exactly on switch:N (each step one flow per link
// direction). On trn3 with groups=server the outer rings share forwarded cross-rack links.
#include <algorithm>
#include <array>
#include <map>

#include "collectives/cost.hpp"
#include "collectives/groups.hpp"
#include "collectives/hierarchical.hpp"
#include "topology/errors.hpp"

namespace ultrasim {
namespace {

using Op = HierarchicalOp;
// One exchange: `members` in ring order, member k ending with (reduce-scatter) or starting with
// (all-gather) the slots `blocks[k]`.
struct Exchange {
  std::vector<int> members;
  std::vector<std::vector<int>> blocks;
};
struct Phase {
  Op op;
  bool ring;
  std::vector<Exchange> exchanges;  // disjoint for inner phases; per column, in column order, for outer
};

std::vector<int> my_columns(const Groups& g, int group, int member) {
  std::vector<int> columns;
  for (int c = member; c < g.columns(); c += static_cast<int>(g.members[group].size())) columns.push_back(c);
  return columns;
}

// Inner exchanges: in group i, member k's block holds every part of every column k owns.
std::vector<Exchange> inner(const Groups& g) {
  std::vector<Exchange> out;
  for (int i = 0; i < static_cast<int>(g.members.size()); ++i) {
    Exchange e{g.members[i], {}};
    for (int k = 0; k < static_cast<int>(e.members.size()); ++k) {
      e.blocks.emplace_back();
      for (int c : my_columns(g, i, k))
        for (int j = 0; j < static_cast<int>(g.members.size()); ++j)
          if (g.at(j, c) >= 0) e.blocks.back().push_back(g.at(j, c));
    }
    out.push_back(std::move(e));
  }
  return out;
}

// Outer exchanges: for column c, one owner per group, owner j's block is the part of chip (j, c).
std::vector<Exchange> outer(const Groups& g) {
  std::vector<Exchange> out;
  for (int c = 0; c < g.columns(); ++c) {
    Exchange e;
    for (int j = 0; j < static_cast<int>(g.members.size()); ++j) {
      e.members.push_back(g.owner(j, c));
      e.blocks.push_back(g.at(j, c) >= 0 ? std::vector<int>{g.at(j, c)} : std::vector<int>{});
    }
    out.push_back(std::move(e));
  }
  return out;
}

// The transfers of one exchange, round by round: ring rounds s = 0 .. n-2 (reduce-scatter: member q sends
// block q-s-1 right; all-gather: block q-s), or a single direct round. Empty blocks are not sent.
void exchange_rounds(const Exchange& e, Op op, bool ring,
                     const std::function<void(int, int, int, int)>& emit) {
  const int n = static_cast<int>(e.members.size());
  for (int q = 0; q < n; ++q)
    for (int s = 0; s < (ring ? n - 1 : 1); ++s)
      for (int k = 1; k < (ring ? 2 : n); ++k) {
        int dst = (q + k) % n;
        int block =
            ring ? (op == Op::kReduceScatter ? q - s - 1 : q - s) : (op == Op::kReduceScatter ? dst : q);
        block = ((block % n) + n) % n;
        if (!e.blocks[block].empty()) emit(s, e.members[q], e.members[dst], block);
      }
}

class Hierarchical : public Algorithm {
 public:
  Hierarchical(std::vector<HierarchicalPhase> phases, std::string groups, bool inner_ring, bool outer_ring)
      : phases_(std::move(phases)),
        groups_(std::move(groups)),
        inner_ring_(inner_ring),
        outer_ring_(outer_ring) {}
  void place(const Topology& topology) override { labels_ = level_labels(groups_, topology); }

  void run(Chip& me) const override {
    auto plan = make_plan(me.size());
    for (std::size_t ph = 0; ph < plan.size(); ++ph) {
      const bool reduce = plan[ph].op == Op::kReduceScatter;
      for (const Exchange& e : plan[ph].exchanges) {
        std::map<int, std::vector<std::array<int, 3>>> mine;  // round -> (src, dst, block) involving me
        exchange_rounds(e, plan[ph].op, plan[ph].ring, [&](int s, int src, int dst, int block) {
          if (src == me.rank() || dst == me.rank()) mine[s].push_back({src, dst, block});
        });
        for (const auto& [s, transfers] : mine) {
          const int step = static_cast<int>(ph) * me.size() + s;
          std::vector<RequestPtr> received, all;
          for (const auto& [src, dst, block] : transfers) {
            if (src == me.rank()) all.push_back(me.send(dst, step, e.blocks[block]));
            if (dst == me.rank()) received.push_back(me.recv(src, step)), all.push_back(received.back());
          }
          me.wait(all);
          for (const auto& in : received) me.accept(in, reduce ? OnArrival::kReduce : OnArrival::kKeep);
        }
      }
    }
  }

  double model_s(const CostInput& in) const override {
    double total = 0;
    auto parts = even_chunks(in.bytes, in.p);
    auto block_bytes = [&](const std::vector<int>& block) {
      std::uint64_t sum = 0;
      for (int s : block) sum += parts[s];
      return sum;
    };
    for (const Phase& phase : make_plan(in.p)) {
      bool reduce = phase.op == Op::kReduceScatter;
      if (phase.ring) {
        std::vector<std::vector<RoundTransfer>> rounds;
        int base = 0;  // a chip's exchanges run one after the other: number their rounds apart
        for (const Exchange& e : phase.exchanges) {
          exchange_rounds(e, phase.op, true, [&](int s, int src, int dst, int block) {
            if (static_cast<int>(rounds.size()) <= base + s) rounds.resize(base + s + 1);
            rounds[base + s].push_back({src, dst, block_bytes(e.blocks[block]), reduce});
          });
          base += static_cast<int>(e.members.size()) - 1;
        }
        total += rounds_time(in, static_cast<int>(rounds.size()),
                             [&](int k, std::vector<RoundTransfer>& out) { out = rounds[k]; });
      } else {
        std::map<std::pair<int, int>, std::uint64_t> flows;
        std::vector<std::uint64_t> reduced(in.p, 0);
        for (const Exchange& e : phase.exchanges)
          exchange_rounds(e, phase.op, false, [&](int, int src, int dst, int block) {
            flows[{src, dst}] += block_bytes(e.blocks[block]);
            if (reduce) reduced[dst] += block_bytes(e.blocks[block]);
          });
        if (flows.empty()) continue;
        total += concurrent_flows_time(in, [&](int a, int b) {
          auto it = flows.find({a, b});
          return it == flows.end() ? std::uint64_t{0} : it->second;
        });
        total += in.reduce_time(*std::max_element(reduced.begin(), reduced.end()));
      }
    }
    return total;
  }

 private:
  std::vector<Phase> make_plan(int p) const {
    Groups g =
        make_groups(groups_, p, labels_.size() == static_cast<std::size_t>(p) ? labels_ : std::vector<int>{});
    std::vector<Phase> plan;
    for (auto [op, is_inner] : phases_)
      plan.push_back({op, is_inner ? inner_ring_ : outer_ring_, is_inner ? inner(g) : outer(g)});
    return plan;
  }
  std::vector<HierarchicalPhase> phases_;  // (operation, inner?)
  std::string groups_;
  bool inner_ring_, outer_ring_;
  std::vector<int> labels_;
};

std::vector<ParamSpec> hierarchical_params() {
  return {groups_param(),
          {"inner",
           "ring",
           Unit::kChoice,
           "exchange inside a group: ring (g-1 steps) or direct (one step)",
           "NCCL: ring inside a node",
           {"ring", "direct"}},
          {"outer",
           "ring",
           Unit::kChoice,
           "exchange across groups: ring or direct",
           "NCCL: ring across nodes",
           {"ring", "direct"}}};
}

AlgorithmEntry hierarchical(const std::string& collective, const std::string& description,
                            std::vector<HierarchicalPhase> phases) {
  return {collective, "hierarchical", description,
          [phases](const ParamSet& params) {
            return std::make_unique<Hierarchical>(phases, params.text("groups"),
                                                  params.text("inner") == "ring",
                                                  params.text("outer") == "ring");
          },
          hierarchical_params()};
}

}  // namespace

std::unique_ptr<Algorithm> make_hierarchical(std::vector<HierarchicalPhase> phases, std::string groups,
                                             bool inner_ring, bool outer_ring) {
  return std::make_unique<Hierarchical>(std::move(phases), std::move(groups), inner_ring, outer_ring);
}

AlgorithmEntry hierarchical_allreduce() {
  return hierarchical("allreduce", "reduce-scatter in groups, all-reduce across groups, all-gather in groups",
                      {{Op::kReduceScatter, true},
                       {Op::kReduceScatter, false},
                       {Op::kAllGather, false},
                       {Op::kAllGather, true}});
}
AlgorithmEntry hierarchical_reducescatter() {
  return hierarchical("reducescatter", "reduce-scatter in groups, then across groups",
                      {{Op::kReduceScatter, true}, {Op::kReduceScatter, false}});
}
AlgorithmEntry hierarchical_allgather() {
  return hierarchical("allgather", "all-gather across groups, then in groups",
                      {{Op::kAllGather, false}, {Op::kAllGather, true}});
}

}  // namespace ultrasim
