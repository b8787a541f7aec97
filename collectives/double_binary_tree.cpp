#include "collectives/double_binary_tree.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "collectives/chip.hpp"

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

}  // namespace

// NCCL's second tree (ncclGetDtree): the first mirrored for even p, shifted by one for odd p.
int two_tree_parent(int p, int tree, int r) {
  if (tree == 0) return btree_parent(p, r);
  if (p % 2 == 0) {
    const int u = btree_parent(p, p - 1 - r);
    return u < 0 ? -1 : p - 1 - u;
  }
  const int u = btree_parent(p, (r + p - 1) % p);
  return u < 0 ? -1 : (u + 1) % p;
}

namespace {

// Both trees: each chip's parent, depth and children, and the colour (round parity) of each chip's edge
// to its parent.
struct TwoTrees {
  int p = 0;
  std::array<std::vector<int>, 2> parent, colour, depth;  // colour[t][x]: of the edge x -> parent[t][x]
  std::array<std::vector<std::vector<int>>, 2> children;
};

TwoTrees make_two_trees(int p) {
  TwoTrees trees;
  trees.p = p;
  for (int t = 0; t < 2; ++t) {
    auto &parent = trees.parent[t], &depth = trees.depth[t];
    parent.resize(p), trees.colour[t].assign(p, -1), depth.assign(p, 0), trees.children[t].resize(p);
    for (int x = 0; x < p; ++x) parent[x] = two_tree_parent(p, t, x);
    for (int x = 0; x < p; ++x) {
      for (int y = parent[x]; y >= 0; y = parent[y]) ++depth[x];
      if (parent[x] >= 0) trees.children[t][parent[x]].push_back(x);
    }
  }
  return trees;
}

// Two-colours the edges so that no chip has two edges of one colour on one side: edge t*p + x joins
// vertex x (x's side towards its parents) and p + parent (the parent's side towards its children).
// Colours each path from one end and each cycle from anywhere, alternating.
void colour_tree_edges(TwoTrees& trees) {
  const int p = trees.p;
  auto& parent = trees.parent;
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
    for (int c = 0; e >= 0 && trees.colour[e / p][e % p] < 0; c ^= 1) {
      trees.colour[e / p][e % p] = c;
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
}

// The transfers' rounds: chunk c crosses edge x -> parent (up) or parent -> x (down) in the first round
// of the edge's colour that comes after its inputs arrived and two rounds after the edge's previous chunk.
// Transfer key(up, t, x, c) gets round[key]; `keys` lists them in the order they were scheduled.
struct TreeRounds {
  int p, chunks;
  std::vector<int> round, keys;
  int key(bool up, int t, int x, int c) const { return ((up ? 0 : 2) + t) * p * chunks + x * chunks + c; }
};

TreeRounds schedule_tree_rounds(const TwoTrees& trees, int chunks) {
  const int p = trees.p;
  TreeRounds r{p, chunks, std::vector<int>(4 * p * chunks, -1), {}};
  int rounds = 0;
  for (bool up : {true, false}) {
    const int start = rounds;  // the broadcast begins once the reduction is over
    for (int t = 0; t < 2; ++t) {
      const auto &parent = trees.parent[t], &depth = trees.depth[t];
      std::vector<int> order(p);
      for (int x = 0; x < p; ++x) order[x] = x;
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return up ? depth[a] > depth[b] : depth[a] < depth[b];  // inputs first
      });
      for (int x : order) {
        if (parent[x] < 0) continue;
        for (int c = 0, previous = start - 2; c < chunks; ++c) {
          int ready = std::max(start, previous + 2);
          if (up)
            for (int y : trees.children[t][x]) ready = std::max(ready, r.round[r.key(true, t, y, c)] + 1);
          else if (parent[parent[x]] >= 0)
            ready = std::max(ready, r.round[r.key(false, t, parent[x], c)] + 1);
          previous = ready + ((ready ^ trees.colour[t][x]) & 1);
          r.round[r.key(up, t, x, c)] = previous;
          r.keys.push_back(r.key(up, t, x, c));
          rounds = std::max(rounds, previous + 1);
        }
      }
    }
  }
  return r;
}

}  // namespace

std::vector<TreeTransfer> two_tree_schedule(const int p, const int chunks) {
  TwoTrees trees = make_two_trees(p);
  colour_tree_edges(trees);
  TreeRounds r = schedule_tree_rounds(trees, chunks);
  std::vector<int> keys = r.keys;
  std::stable_sort(keys.begin(), keys.end(), [&](int a, int b) { return r.round[a] < r.round[b]; });
  std::vector<int> position(4 * p * chunks, -1);
  for (std::size_t i = 0; i < keys.size(); ++i) position[keys[i]] = static_cast<int>(i);
  std::vector<TreeTransfer> transfers;
  for (int k : keys) {
    const bool up = k < 2 * p * chunks;
    const int t = k / (p * chunks) % 2, x = k / chunks % p, c = k % chunks, above = trees.parent[t][x];
    TreeTransfer tr{r.round[k], up ? x : above, up ? above : x, t * chunks + c, up, {}};
    // Up: the chunk of every child of x. Down: what reached the parent, or at a root the children's chunks.
    if (up || trees.parent[t][above] < 0)
      for (int y : trees.children[t][up ? x : above]) tr.needs.push_back(position[r.key(true, t, y, c)]);
    else
      tr.needs.push_back(position[r.key(false, t, above, c)]);
    std::sort(tr.needs.begin(), tr.needs.end());
    transfers.push_back(std::move(tr));
  }
  return transfers;
}

TreeInbox::TreeInbox(Chip& me, const std::vector<TreeTransfer>& transfers)
    : me_(me), transfers_(transfers), taken_(transfers.size(), 0) {}

void TreeInbox::take(int i) {
  if (taken_[i]++) return;
  const TreeTransfer& t = transfers_[i];
  auto in = me_.recv(t.src, t.round);
  me_.wait({in});
  me_.accept(in, t.reduce ? OnArrival::kReduce : OnArrival::kKeep);
}

}  // namespace ultrasim
