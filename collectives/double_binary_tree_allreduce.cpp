// Double-binary-tree all-reduce (Sanders, Speck & Träff, "Two-tree algorithms for full bandwidth
// broadcast, reduction and scan", Parallel Computing 35(12), 2009; NCCL 2.4's double binary tree,
// Jeaugey 2019, trees in NCCL's src/graph/trees.cc).
//   tree 0: NCCL's in-order binary tree over the ranks (root 0, the odd ranks are its leaves);
//   tree 1: tree 0 mirrored (r -> p-1-r) when p is even, shifted (r -> r+1) when p is odd, so a chip has
//   at most two children over both trees (it is interior in one; chip 0 has one child in each for odd p);
//   tree t carries half t of the buffer, cut into C = pipeline_chunks chunks (slots tC .. tC+C-1);
//   colour the edges 0/1 so that a chip's edges to its parents differ and its edges to its children
//   differ (every vertex of that bipartite graph has degree <= 2: paths and even cycles, König);
//   1. reduce: in round k only edges of colour k mod 2 carry data; a chip sends chunk c up as soon as it
//      has added chunk c of all its children, one round of its edge's colour after its previous chunk;
//   2. broadcast: the same from the roots down, each chip keeping what arrives.
// So in every round a chip sends at most one chunk and receives at most one (Sanders' schedule).
// model_s = that schedule on per-chip clocks (rounds_time). The textbook estimate counts every round at
// α + b/β, b = n/(2C): each phase takes about 2(C + ceil(log2 p)) rounds (Sanders et al.), so
// T ≈ 2n/β + 4⌈log2 p⌉ n/(2Cβ) + 4(C + ⌈log2 p⌉)α. One-sided sends let a chip that has its data go on
// without waiting a round's α, so model_s is lower: on switch:N about 2n/β(1 + ⌈log2 p⌉/C) plus a few α
// per tree level. It is a lower bound of the simulation, never exact beyond 2 chips: a chip's two children
// (reduce) or two parents (broadcast) run on their own clocks, and when one runs ahead its chunk shares the
// chip's downlink with the other's. Test: exactness_test.cpp.
#include <algorithm>
#include <array>
#include <stdexcept>

#include "collectives/cost.hpp"

namespace ultrasim {
namespace {

// NCCL's in-order binary tree (ncclGetBtree): r's parent clears r's lowest set bit and sets the next one
// up, or only clears it when that leaves the range. -1 for the root, chip 0.
int btree_parent(int p, int r) {
  if (r == 0) return -1;
  const int bit = r & -r;
  const int up = (r ^ bit) | (bit << 1);
  return up < p ? up : r ^ bit;
}

// NCCL's second tree (ncclGetDtree): the first mirrored for even p, shifted by one for odd p.
int tree_parent(int p, int tree, int r) {
  if (tree == 0) return btree_parent(p, r);
  if (p % 2 == 0) {
    const int u = btree_parent(p, p - 1 - r);
    return u < 0 ? -1 : p - 1 - u;
  }
  const int u = btree_parent(p, (r + p - 1) % p);
  return u < 0 ? -1 : (u + 1) % p;
}

struct Transfer {
  int round, src, dst, slot;
  bool reduce;
};

// Both trees, their edge colouring and every transfer of the all-reduce, in round order.
struct TwoTreeSchedule {
  TwoTreeSchedule(int p, int chunks);
  int p;
  std::array<std::vector<int>, 2> parent, colour;  // colour[t][x]: of the edge x -> parent[t][x]
  std::vector<Transfer> transfers;
  int rounds = 0;
};

TwoTreeSchedule::TwoTreeSchedule(int chips, int chunks) : p(chips) {
  for (int t = 0; t < 2; ++t) {
    parent[t].resize(p);
    colour[t].assign(p, -1);
    for (int x = 0; x < p; ++x) parent[t][x] = tree_parent(p, t, x);
  }
  // Edge t*p + x joins vertex x (x's side towards its parents) and p + parent (the parent's side
  // towards its children). Colour each path from one end and each cycle from anywhere, alternating.
  std::vector<std::vector<int>> incident(2 * p);
  for (int t = 0; t < 2; ++t)
    for (int x = 0; x < p; ++x)
      if (parent[t][x] >= 0) {
        incident[x].push_back(t * p + x);
        incident[p + parent[t][x]].push_back(t * p + x);
      }
  for (const auto& edges : incident)
    if (edges.size() > 2) throw std::logic_error("double binary tree: a chip has more than two children");
  auto walk = [&](int v, int e) {
    for (int c = 0; e >= 0 && colour[e / p][e % p] < 0; c ^= 1) {
      colour[e / p][e % p] = c;
      v = v == e % p ? p + parent[e / p][e % p] : e % p;  // the edge's other end
      int next = -1;
      for (int f : incident[v])
        if (f != e) next = f;
      e = next;
    }
  };
  for (int v = 0; v < 2 * p; ++v)
    if (incident[v].size() == 1) walk(v, incident[v][0]);
  for (int v = 0; v < 2 * p; ++v)
    for (int e : incident[v]) walk(v, e);

  // Rounds: the first round of the edge's colour from `from` on.
  auto first_round = [](int from, int c) { return from + ((from ^ c) & 1); };
  std::array<std::vector<int>, 2> depth;
  std::array<std::vector<std::vector<int>>, 2> children;
  for (int t = 0; t < 2; ++t) {
    depth[t].assign(p, 0);
    children[t].resize(p);
    for (int x = 0; x < p; ++x) {
      for (int y = parent[t][x]; y >= 0; y = parent[t][y]) ++depth[t][x];
      if (parent[t][x] >= 0) children[t][parent[t][x]].push_back(x);
    }
  }
  std::vector<std::vector<int>> sent(2 * p, std::vector<int>(chunks));  // [t*p + x][c]: round x sent c
  auto add = [&](int t, int x, int c, int round, bool up) {
    sent[t * p + x][c] = round;
    transfers.push_back(up ? Transfer{round, x, parent[t][x], t * chunks + c, true}
                           : Transfer{round, parent[t][x], x, t * chunks + c, false});
    rounds = std::max(rounds, round + 1);
  };
  for (bool up : {true, false}) {
    const int start = rounds;  // the broadcast begins once the reduction is over
    for (int t = 0; t < 2; ++t) {
      std::vector<int> order(p);
      for (int x = 0; x < p; ++x) order[x] = x;
      // Reduce: children before their parent; broadcast: parents before their children.
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return up ? depth[t][a] > depth[t][b] : depth[t][a] < depth[t][b];
      });
      for (int x : order) {
        if (parent[t][x] < 0) continue;
        for (int c = 0, previous = start - 2; c < chunks; ++c) {
          int ready = start;  // up: after every child's chunk c arrived; down: after the parent's did
          if (up) {
            for (int y : children[t][x]) ready = std::max(ready, sent[t * p + y][c] + 1);
          } else if (parent[t][parent[t][x]] >= 0) {
            ready = sent[t * p + parent[t][x]][c] + 1;
          }
          previous = first_round(std::max(ready, previous + 2), colour[t][x]);
          add(t, x, c, previous, up);
        }
      }
    }
  }
  std::stable_sort(transfers.begin(), transfers.end(),
                   [](const Transfer& a, const Transfer& b) { return a.round < b.round; });
}

class DoubleBinaryTreeAllreduce : public Algorithm {
 public:
  explicit DoubleBinaryTreeAllreduce(int chunks) : chunks_(chunks) {}
  int chunks(int) const override { return 2 * chunks_; }
  void run(Chip& me) const override {
    const TwoTreeSchedule schedule(me.size(), chunks_);
    const int r = me.rank();
    RequestPtr out, in;
    bool reduce = false;
    auto finish_round = [&] {
      std::vector<RequestPtr> requests;
      for (const auto& request : {out, in})
        if (request) requests.push_back(request);
      me.wait(requests);
      if (in) me.accept(in, reduce ? OnArrival::kReduce : OnArrival::kKeep);
      out = in = nullptr;
    };
    for (std::size_t i = 0; i < schedule.transfers.size(); ++i) {
      const Transfer& t = schedule.transfers[i];
      if (t.src == r) out = me.send(t.dst, t.round, {t.slot});
      if (t.dst == r) in = me.recv(t.src, t.round), reduce = t.reduce;
      if (i + 1 == schedule.transfers.size() || schedule.transfers[i + 1].round != t.round) finish_round();
    }
  }
  double model_s(const CostInput& in) const override {
    const TwoTreeSchedule schedule(in.p, chunks_);
    const auto bytes = even_chunks(in.bytes, 2 * chunks_);
    std::vector<std::vector<RoundTransfer>> by_round(schedule.rounds);
    for (const Transfer& t : schedule.transfers)
      by_round[t.round].push_back({t.src, t.dst, bytes[t.slot], t.reduce});
    return rounds_time(in, schedule.rounds, [&](int k, std::vector<RoundTransfer>& out) {
      out.insert(out.end(), by_round[k].begin(), by_round[k].end());
    });
  }

 private:
  int chunks_;
};

}  // namespace

AlgorithmEntry double_binary_tree_allreduce() {
  return {
      "allreduce",
      "double-binary-tree",
      "two complementary binary trees, half the buffer each, pipelined in pipeline_chunks chunks per tree",
      [](const ParamSet& p) {
        return std::make_unique<DoubleBinaryTreeAllreduce>(static_cast<int>(p.number("pipeline_chunks")));
      },
      {{"pipeline_chunks", "16", Unit::kCount, "chunks each tree's half of the buffer is cut into",
        "assumption: see the README's double-binary-tree note"}}};
}

}  // namespace ultrasim
