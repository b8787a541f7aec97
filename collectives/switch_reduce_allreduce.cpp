// In-switch all-reduce (NVIDIA NVLS, Mellanox SHARP: Graham et al., "Scalable Hierarchical Aggregation
// Protocol (SHArP)", COMHPC 2016): the switch adds the chips' buffers and multicasts the sum, so each chip
// sends the buffer once and receives it once instead of 2(p-1)/p times each way.
// Each chip's reducing switch is the reduction-capable switch attached to it that reaches the most chips;
// the chips sharing one form a group (groups.hpp columns pair them across groups).
//   one group:  for d = 0 .. D-1 (D = pipeline_chunks): push slice d of the buffer to the switch, waiting
//               only until it has left; the switch multicasts each slice's sum as soon as all are in.
//   G groups:   in-switch reduce-scatter (push the buffer, get back the sums of the parts of one's columns),
//               a ring all-reduce of each column among its owners across groups, and an in-switch
//               all-gather (push one's parts, get back the rest), each switch phase pipelined in D slices.
// model_s, one group: slices of b = n/D bytes leave back to back (b/β each); slice d is ready at the switch
// α_up after the last chip's slice d left, the engine adds it in b/R_switch (one slice at a time), and
// its multicast takes b/β on each chip's downlink after the previous slice's, plus α_down:
// T = α_up + D b/β + b/R_sw + b/β + α_down when R_sw >= β, i.e. n/β + (n/D)(1/β + 1/R_sw) + 2α. Exact on
// switch:N (switch_reduction=true), where α_up/α_down are the chip-switch link latency plus half the
// switch's latency. With G groups the three phases are added (the middle one as the ring's rounds_time).
// Bus bandwidth: busbw keeps nccl-tests' 2(p-1)/p factor, so it exceeds the link rate (as NVLS does); the
// bytes that crossed the chips' links are the run's bytes_sent (n per chip up, n down).
#include <algorithm>
#include <stdexcept>

#include "collectives/chain.hpp"
#include "collectives/cost.hpp"
#include "collectives/group_exchange.hpp"
#include "topology/base/errors.hpp"
#include "topology/registry.hpp"

namespace ultrasim {
namespace {

class SwitchReduceAllreduce : public Algorithm {
 public:
  explicit SwitchReduceAllreduce(int depth) : depth_(depth) {}
  int chunks(int p) const override { return p * depth_; }

  // Picks each chip's reducing switch: among the switches attached to it, the one reaching most chips.
  bool runs_on_groups() const override { return false; }
  // The switches' abilities are the topology's parameters (switch_reduction, switch_reduce_bandwidth).
  void place(const Topology& topology) override {
    engine_rate_ = switch_reduce_of(topology.params()).rate;
    require_reducing_switches(topology, "switch-reduce");
    std::vector<int> reach(topology.switch_count(), 0), index(boost::num_vertices(topology.graph()), -1);
    for (int k = 0; k < topology.switch_count(); ++k) index[topology.switches()[k]] = k;
    auto attached = [&](int rank) {
      std::vector<int> out;
      for (auto [e, end] = boost::out_edges(topology.chip(rank), topology.graph()); e != end; ++e) {
        int k = index[boost::target(*e, topology.graph())];
        if (k >= 0 && std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
      }
      return out;
    };
    for (int r = 0; r < topology.chip_count(); ++r)
      for (int k : attached(r)) ++reach[k];
    switch_of_.clear();
    for (int r = 0; r < topology.chip_count(); ++r) {
      auto mine = attached(r);
      if (mine.empty()) throw InputError("switch-reduce: chip " + std::to_string(r) + " has no switch");
      switch_of_.push_back(*std::max_element(mine.begin(), mine.end(), [&](int a, int b) {
        return reach[a] < reach[b] || (reach[a] == reach[b] && a > b);
      }));
    }
    ports_.clear();
    for (int r = 0; r < topology.chip_count(); ++r) {
      Vertex sw = topology.switches()[switch_of_[r]];
      for (auto [e, end] = boost::out_edges(topology.chip(r), topology.graph()); e != end; ++e)
        if (boost::target(*e, topology.graph()) == sw) {
          const Link& link = topology.link(*e);
          ports_.push_back({link.bandwidth(), link.latency + topology.node(sw).latency / 2});
          break;
        }
    }
  }

  void run(Chip& me) const override {
    Groups g = groups(me.size());
    const int group = g.group_of[me.rank()], sw = switch_index(me.rank());
    const auto& members = g.members[group];
    const GroupExchange inner = inner_exchange(g, group);
    const std::vector<int> all = slot_range(0, me.size()), mine = inner.blocks[g.position[me.rank()]];
    if (g.members.size() == 1) return in_switch(me, sw, members, 0, all, all);
    in_switch(me, sw, members, 0, all, mine);  // reduce-scatter
    auto outer = split_slots(exchanges_of(g, false, me.rank()), depth_);
    run_exchanges(me, outer, HierarchicalOp::kReduceScatter, true, depth_);
    run_exchanges(me, outer, HierarchicalOp::kAllGather, true, depth_ + me.size());
    in_switch(me, sw, members, depth_ + 2 * me.size(), mine, all);  // all-gather
  }

  double model_s(const CostInput& in) const override {
    if (in.p < 2) return 0;
    if (static_cast<int>(ports_.size()) != in.p)
      throw std::logic_error("switch-reduce: model_s before place()");
    Groups g = groups(in.p);
    auto slots = even_chunks(in.bytes, in.p * depth_);
    const std::vector<std::vector<int>> all(in.p, slot_range(0, in.p)), mine = owned_parts(g);
    if (g.members.size() == 1) return in_switch_time(in, g, all, all, slots);
    auto outer = split_slots(outer_exchanges(g), depth_);
    return in_switch_time(in, g, all, mine, slots) +
           exchanges_time(in, outer, HierarchicalOp::kReduceScatter, true, slots) +
           exchanges_time(in, outer, HierarchicalOp::kAllGather, true, slots) +
           in_switch_time(in, g, mine, all, slots);
  }

 private:
  // Per chip, the parts of the columns it owns: the block its group's inner exchange gives it.
  static std::vector<std::vector<int>> owned_parts(const Groups& g) {
    std::vector<std::vector<int>> parts(g.group_of.size());
    for (const auto& e : inner_exchanges(g))
      for (std::size_t k = 0; k < e.members.size(); ++k) parts[e.members[k]] = e.blocks[k];
    return parts;
  }
  // One pipelined in-switch phase: for each slice d, contribute the slots of `send` parts and ask back
  // those of `want` parts.
  void in_switch(Chip& me, int sw, const std::vector<int>& members, int first_step,
                 const std::vector<int>& send, const std::vector<int>& want) const {
    std::vector<RequestPtr> results;
    for (int d = 0; d < depth_; ++d) {
      std::vector<int> slots, wants;
      for (int s : send) slots.push_back(s * depth_ + d);
      for (int s : want) wants.push_back(s * depth_ + d);
      auto requests = me.switch_reduce(sw, members, first_step + d, slots, wants);
      me.wait({requests.sent});
      results.push_back(requests.result);
    }
    me.wait(results);
    for (const auto& result : results) me.copy(result);
  }
  // The α-β time of in_switch() for every group at once (see the header); send/want are parts per chip.
  double in_switch_time(const CostInput& in, const Groups& g, const std::vector<std::vector<int>>& send,
                        const std::vector<std::vector<int>>& want,
                        const std::vector<std::uint64_t>& slots) const {
    double slowest = 0;
    auto slice_bytes = [&](const std::vector<int>& parts, int d) {
      std::uint64_t sum = 0;
      for (int s : parts) sum += slots[s * depth_ + d];
      return sum;
    };
    for (const auto& members : g.members) {
      std::vector<double> sent(members.size(), 0.0), downloaded(members.size(), 0.0);
      double engine = 0;
      for (int d = 0; d < depth_; ++d) {
        double ready = 0;
        std::vector<char> contributed(in.p, 0);
        for (std::size_t m = 0; m < members.size(); ++m) {
          const Port& port = ports_[members[m]];
          sent[m] += static_cast<double>(slice_bytes(send[members[m]], d)) / port.bandwidth;
          ready = std::max(ready, sent[m] + port.latency + in.transfer_overhead);
          for (int s : send[members[m]]) ++contributed[s];
        }
        std::uint64_t reduced = 0;  // the engine adds every slot that some member sent
        for (int s = 0; s < in.p; ++s)
          if (contributed[s]) reduced += slots[s * depth_ + d];
        engine = std::max(ready, engine) + (engine_rate_ ? reduced / *engine_rate_ : 0.0);
        for (std::size_t m = 0; m < members.size(); ++m) {
          const Port& port = ports_[members[m]];
          std::uint64_t back = 0;  // the wanted slots, but not those only this chip sent
          for (int s : want[members[m]]) {
            bool own_only = contributed[s] == 1 && std::find(send[members[m]].begin(), send[members[m]].end(),
                                                             s) != send[members[m]].end();
            if (contributed[s] && !own_only) back += slots[s * depth_ + d];
          }
          downloaded[m] = std::max(downloaded[m], engine) + static_cast<double>(back) / port.bandwidth;
          slowest = std::max(slowest, downloaded[m] + port.latency + in.transfer_overhead);
        }
      }
    }
    return slowest;
  }
  int switch_index(int rank) const { return switch_of_.empty() ? 0 : switch_of_[rank]; }
  Groups groups(int p) const {
    return make_groups(std::to_string(std::max(p, 1)), p, switch_of_);  // without a topology: one group
  }
  int depth_;
  std::optional<double> engine_rate_;  // nullopt: the switches add at line rate (and on the recording fake)
  std::vector<int> switch_of_;         // each chip's reducing switch, after place()
  struct Port {
    double bandwidth = 0, latency = 0;  // of the chip's link to it; latency includes half the switch's
  };
  std::vector<Port> ports_;
};

}  // namespace

AlgorithmEntry switch_reduce_allreduce() {
  return {"allreduce",
          "switch-reduce",
          "switches add the buffers and multicast the sum (NVLS/SHARP-like)",
          [](const ParamSet& params) {
            return std::make_unique<SwitchReduceAllreduce>(pipeline_chunks_table().read(params).chunks);
          },
          pipeline_chunks_table().specs(),
          /*posts_to_all=*/true,
          /*in_switch_reduction=*/true};
}

}  // namespace ultrasim
