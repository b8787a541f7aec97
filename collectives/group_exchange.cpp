#include "collectives/group_exchange.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <map>

#include "collectives/cost.hpp"

namespace ultrasim {

static std::vector<int> my_columns(const Groups& g, int group, int member) {
  std::vector<int> columns;
  for (int c = member; c < g.columns(); c += static_cast<int>(g.members[group].size())) columns.push_back(c);
  return columns;
}

// Inner exchanges: in group i, member k's block holds every part of every column k owns.
std::vector<GroupExchange> inner_exchanges(const Groups& g) {
  std::vector<GroupExchange> out;
  for (int i = 0; i < static_cast<int>(g.members.size()); ++i) {
    GroupExchange e{g.members[i], {}};
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
std::vector<GroupExchange> outer_exchanges(const Groups& g) {
  std::vector<GroupExchange> out;
  for (int c = 0; c < g.columns(); ++c) {
    GroupExchange e;
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
static void exchange_rounds(const GroupExchange& e, HierarchicalOp op, bool ring,
                            const std::function<void(int, int, int, int)>& emit) {
  const int n = static_cast<int>(e.members.size());
  for (int q = 0; q < n; ++q)
    for (int s = 0; s < (ring ? n - 1 : 1); ++s)
      for (int k = 1; k < (ring ? 2 : n); ++k) {
        int dst = (q + k) % n;
        int block = ring ? (op == HierarchicalOp::kReduceScatter ? q - s - 1 : q - s)
                         : (op == HierarchicalOp::kReduceScatter ? dst : q);
        block = ((block % n) + n) % n;
        if (!e.blocks[block].empty()) emit(s, e.members[q], e.members[dst], block);
      }
}

std::vector<GroupExchange> split_slots(std::vector<GroupExchange> exchanges, int depth) {
  for (GroupExchange& e : exchanges)
    for (auto& block : e.blocks) {
      std::vector<int> split;
      for (int s : block)
        for (int d = 0; d < depth; ++d) split.push_back(s * depth + d);
      block = std::move(split);
    }
  return exchanges;
}

void run_exchanges(Chip& me, const std::vector<GroupExchange>& exchanges, HierarchicalOp op, bool ring,
                   int first_step) {
  const bool reduce = op == HierarchicalOp::kReduceScatter;
  for (const GroupExchange& e : exchanges) {
    std::map<int, std::vector<std::array<int, 3>>> mine;  // step -> (src, dst, block) involving me
    exchange_rounds(e, op, ring, [&](int s, int src, int dst, int block) {
      if (src == me.rank() || dst == me.rank()) mine[s].push_back({src, dst, block});
    });
    for (const auto& [s, transfers] : mine) {
      std::vector<RequestPtr> received, all;
      for (const auto& [src, dst, block] : transfers) {
        if (src == me.rank()) all.push_back(me.send(dst, first_step + s, e.blocks[block]));
        if (dst == me.rank())
          received.push_back(me.recv(src, first_step + s)), all.push_back(received.back());
      }
      me.wait(all);
      for (const auto& in : received) me.accept(in, reduce ? OnArrival::kReduce : OnArrival::kKeep);
    }
  }
}

double exchanges_time(const CostInput& in, const std::vector<GroupExchange>& exchanges, HierarchicalOp op,
                      bool ring, const std::vector<std::uint64_t>& slot_bytes) {
  const bool reduce = op == HierarchicalOp::kReduceScatter;
  auto block_bytes = [&](const std::vector<int>& block) {
    std::uint64_t sum = 0;
    for (int s : block) sum += slot_bytes[s];
    return sum;
  };
  if (ring) {
    std::vector<std::vector<RoundTransfer>> rounds;
    int base = 0;  // a chip's exchanges run one after the other: number their rounds apart
    for (const GroupExchange& e : exchanges) {
      exchange_rounds(e, op, true, [&](int s, int src, int dst, int block) {
        if (static_cast<int>(rounds.size()) <= base + s) rounds.resize(base + s + 1);
        rounds[base + s].push_back({src, dst, block_bytes(e.blocks[block]), reduce});
      });
      base += static_cast<int>(e.members.size()) - 1;
    }
    return rounds_time(in, static_cast<int>(rounds.size()),
                       [&](int k, std::vector<RoundTransfer>& out) { out = rounds[k]; });
  }
  std::map<std::pair<int, int>, std::uint64_t> flows;
  std::vector<std::uint64_t> reduced(in.p, 0);
  for (const GroupExchange& e : exchanges)
    exchange_rounds(e, op, false, [&](int, int src, int dst, int block) {
      flows[{src, dst}] += block_bytes(e.blocks[block]);
      if (reduce) reduced[dst] += block_bytes(e.blocks[block]);
    });
  if (flows.empty()) return 0;
  return concurrent_flows_time(in, flows) + in.reduce_time(*std::max_element(reduced.begin(), reduced.end()));
}

}  // namespace ultrasim
