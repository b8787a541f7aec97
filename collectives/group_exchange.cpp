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

// Inner exchange of group i: member k's block holds every part of every column k owns.
GroupExchange inner_exchange(const Groups& g, int i) {
  GroupExchange e{g.members[i], {}};
  for (int k = 0; k < static_cast<int>(e.members.size()); ++k) {
    e.blocks.emplace_back();
    for (int c : my_columns(g, i, k))
      for (int j = 0; j < static_cast<int>(g.members.size()); ++j)
        if (g.at(j, c) >= 0) e.blocks.back().push_back(g.at(j, c));
  }
  return e;
}

// Outer exchange of column c: one owner per group, owner j's block is the part of chip (j, c).
GroupExchange outer_exchange(const Groups& g, int c) {
  GroupExchange e;
  for (int j = 0; j < static_cast<int>(g.members.size()); ++j) {
    e.members.push_back(g.owner(j, c));
    e.blocks.push_back(g.at(j, c) >= 0 ? std::vector<int>{g.at(j, c)} : std::vector<int>{});
  }
  return e;
}

std::vector<GroupExchange> inner_exchanges(const Groups& g) {
  std::vector<GroupExchange> out;
  for (int i = 0; i < static_cast<int>(g.members.size()); ++i) out.push_back(inner_exchange(g, i));
  return out;
}

std::vector<GroupExchange> outer_exchanges(const Groups& g) {
  std::vector<GroupExchange> out;
  for (int c = 0; c < g.columns(); ++c) out.push_back(outer_exchange(g, c));
  return out;
}

ExchangePlan::ExchangePlan(Groups g)
    : groups(std::move(g)), inner(inner_exchanges(groups)), outer(outer_exchanges(groups)) {}

std::vector<const GroupExchange*> ExchangePlan::of(bool in_group, int rank) const {
  const int group = rank < static_cast<int>(groups.group_of.size()) ? groups.group_of[rank] : -1;
  if (group < 0) return {};
  if (in_group) return {&inner[group]};
  std::vector<const GroupExchange*> out;
  for (int c : my_columns(groups, group, groups.position[rank])) out.push_back(&outer[c]);
  return out;
}

std::vector<GroupExchange> exchanges_of(const Groups& g, bool inner, int rank) {
  const int group = rank < static_cast<int>(g.group_of.size()) ? g.group_of[rank] : -1;
  if (group < 0) return {};
  if (inner) return {inner_exchange(g, group)};
  std::vector<GroupExchange> out;
  for (int c : my_columns(g, group, g.position[rank])) out.push_back(outer_exchange(g, c));
  return out;
}

// The block member q sends to member dst in step s of an exchange of n members: ring, reduce-scatter
// q-s-1, all-gather q-s (dst is q+1); direct, reduce-scatter dst's own, all-gather q's own.
static int sent_block(HierarchicalOp op, bool ring, int n, int q, int s, int dst) {
  const int block = ring ? (op == HierarchicalOp::kReduceScatter ? q - s - 1 : q - s)
                         : (op == HierarchicalOp::kReduceScatter ? dst : q);
  return ((block % n) + n) % n;
}

// The transfers of one exchange, round by round: ring rounds s = 0 .. n-2 (member q sends to q+1), or a
// single direct round (q sends to every other member). Empty blocks are not sent.
static void exchange_rounds(const GroupExchange& e, HierarchicalOp op, bool ring,
                            const std::function<void(int, int, int, int)>& emit) {
  const int n = static_cast<int>(e.members.size());
  for (int q = 0; q < n; ++q)
    for (int s = 0; s < (ring ? n - 1 : 1); ++s)
      for (int k = 1; k < (ring ? 2 : n); ++k) {
        const int dst = (q + k) % n, block = sent_block(op, ring, n, q, s, dst);
        if (!e.blocks[block].empty()) emit(s, e.members[q], e.members[dst], block);
      }
}

// The transfers of exchange_rounds that member `me` sends or receives, in exchange_rounds' order within
// each step (by sender, then distance), found without visiting the others'.
static void member_rounds(const GroupExchange& e, HierarchicalOp op, bool ring, int me,
                          const std::function<void(int, int, int, int)>& emit) {
  const int n = static_cast<int>(e.members.size());
  const int last = ring ? 1 : n - 1;  // the largest distance a sender sends over
  std::vector<int> senders;           // who sends to me, and me, in order: in a ring only my left
  if (ring) {
    senders = {std::min(me, (me + n - 1) % n), std::max(me, (me + n - 1) % n)};
    if (senders[0] == senders[1]) senders.pop_back();
  } else {
    for (int q = 0; q < n; ++q) senders.push_back(q);
  }
  for (int s = 0; s < (ring ? n - 1 : 1); ++s)
    for (int q : senders) {
      auto send = [&](int k) {
        const int dst = (q + k) % n, block = sent_block(op, ring, n, q, s, dst);
        if (!e.blocks[block].empty()) emit(s, e.members[q], e.members[dst], block);
      };
      if (q == me)
        for (int k = 1; k <= last; ++k) send(k);
      else if (const int k = (me - q + n) % n; k <= last)
        send(k);
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
  std::vector<const GroupExchange*> each;
  for (const GroupExchange& e : exchanges) each.push_back(&e);
  run_exchanges(me, each, op, ring, first_step);
}

void run_exchanges(Chip& me, const std::vector<const GroupExchange*>& exchanges, HierarchicalOp op, bool ring,
                   int first_step) {
  const bool reduce = op == HierarchicalOp::kReduceScatter;
  std::vector<std::array<int, 3>> step;  // the transfers of one step involving me: (src, dst, block)
  std::vector<RequestPtr> received, all;
  for (const GroupExchange* each : exchanges) {
    const GroupExchange& e = *each;
    const auto at = std::find(e.members.begin(), e.members.end(), me.rank());
    if (at == e.members.end()) continue;
    // Transfers come in step order: each step is run once the next one's first transfer shows up.
    int current = -1;
    auto run_step = [&] {
      if (step.empty()) return;
      received.clear(), all.clear();
      for (const auto& [src, dst, block] : step) {
        if (src == me.rank()) all.push_back(me.send(dst, first_step + current, e.blocks[block]));
        if (dst == me.rank())
          received.push_back(me.recv(src, first_step + current)), all.push_back(received.back());
      }
      me.wait(all);
      for (const auto& in : received) me.accept(in, reduce ? OnArrival::kReduce : OnArrival::kKeep);
      step.clear();
    };
    member_rounds(e, op, ring, static_cast<int>(at - e.members.begin()),
                  [&](int s, int src, int dst, int block) {
                    if (s != current) run_step(), current = s;
                    step.push_back({src, dst, block});
                  });
    run_step();
  }
}

double exchanges_time(const CostInput& in, const std::vector<GroupExchange>& exchanges, HierarchicalOp op,
                      bool ring, const std::vector<std::uint64_t>& slot_bytes) {
  const bool reduce = op == HierarchicalOp::kReduceScatter;
  auto blocks_bytes = [&](const GroupExchange& e) {  // each block's bytes, summed once per exchange
    std::vector<std::uint64_t> bytes;
    for (const auto& block : e.blocks) {
      bytes.push_back(0);
      for (int s : block) bytes.back() += slot_bytes[s];
    }
    return bytes;
  };
  if (ring) {
    std::vector<std::vector<RoundTransfer>> rounds;
    int base = 0;  // a chip's exchanges run one after the other: number their rounds apart
    for (const GroupExchange& e : exchanges) {
      const std::vector<std::uint64_t> bytes = blocks_bytes(e);
      exchange_rounds(e, op, true, [&](int s, int src, int dst, int block) {
        if (static_cast<int>(rounds.size()) <= base + s) rounds.resize(base + s + 1);
        rounds[base + s].push_back({src, dst, bytes[block], reduce});
      });
      base += static_cast<int>(e.members.size()) - 1;
    }
    return rounds_time(in, static_cast<int>(rounds.size()),
                       [&](int k, std::vector<RoundTransfer>& out) { out.swap(rounds[k]); });  // each once
  }
  std::map<std::pair<int, int>, std::uint64_t> flows;
  std::vector<std::uint64_t> reduced(in.p, 0);
  for (const GroupExchange& e : exchanges) {
    const std::vector<std::uint64_t> bytes = blocks_bytes(e);
    exchange_rounds(e, op, false, [&](int, int src, int dst, int block) {
      flows[{src, dst}] += bytes[block];
      if (reduce) reduced[dst] += bytes[block];
    });
  }
  if (flows.empty()) return 0;
  return concurrent_flows_time(in, flows) + in.reduce_time(*std::max_element(reduced.begin(), reduced.end()));
}

}  // namespace ultrasim
