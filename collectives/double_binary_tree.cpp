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

std::vector<TreeTransfer> two_tree_schedule(const int p, const int chunks) {
  std::array<std::vector<int>, 2> parent, colour, depth;  // colour[t][x]: of the edge x -> parent[t][x]
  std::array<std::vector<std::vector<int>>, 2> children;
  for (int t = 0; t < 2; ++t) {
    parent[t].resize(p), colour[t].assign(p, -1), depth[t].assign(p, 0), children[t].resize(p);
    for (int x = 0; x < p; ++x) parent[t][x] = two_tree_parent(p, t, x);
    for (int x = 0; x < p; ++x) {
      for (int y = parent[t][x]; y >= 0; y = parent[t][y]) ++depth[t][x];
      if (parent[t][x] >= 0) children[t][parent[t][x]].push_back(x);
    }
  }
  // Edge t*p + x joins vertex x (x's side towards its parents) and p + parent (the parent's side towards
  // its children). Colour each path from one end and each cycle from anywhere, alternating.
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

  // Rounds: chunk c crosses edge x -> parent (up) or parent -> x (down) in the first round of the edge's
  // colour that comes after its inputs arrived and two rounds after the edge's previous chunk.
  auto key = [&](bool up, int t, int x, int c) { return ((up ? 0 : 2) + t) * p * chunks + x * chunks + c; };
  std::vector<int> round(4 * p * chunks, -1), keys;
  int rounds = 0;
  for (bool up : {true, false}) {
    const int start = rounds;  // the broadcast begins once the reduction is over
    for (int t = 0; t < 2; ++t) {
      std::vector<int> order(p);
      for (int x = 0; x < p; ++x) order[x] = x;
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return up ? depth[t][a] > depth[t][b] : depth[t][a] < depth[t][b];  // inputs first
      });
      for (int x : order) {
        if (parent[t][x] < 0) continue;
        for (int c = 0, previous = start - 2; c < chunks; ++c) {
          int ready = std::max(start, previous + 2);
          if (up)
            for (int y : children[t][x]) ready = std::max(ready, round[key(true, t, y, c)] + 1);
          else if (parent[t][parent[t][x]] >= 0)
            ready = std::max(ready, round[key(false, t, parent[t][x], c)] + 1);
          previous = ready + ((ready ^ colour[t][x]) & 1);
          round[key(up, t, x, c)] = previous;
          keys.push_back(key(up, t, x, c));
          rounds = std::max(rounds, previous + 1);
        }
      }
    }
  }
  std::stable_sort(keys.begin(), keys.end(), [&](int a, int b) { return round[a] < round[b]; });
  std::vector<int> position(4 * p * chunks, -1);
  for (std::size_t i = 0; i < keys.size(); ++i) position[keys[i]] = static_cast<int>(i);
  std::vector<TreeTransfer> transfers;
  for (int k : keys) {
    const bool up = k < 2 * p * chunks;
    const int t = k / (p * chunks) % 2, x = k / chunks % p, c = k % chunks, above = parent[t][x];
    TreeTransfer tr{round[k], up ? x : above, up ? above : x, t * chunks + c, up, {}};
    // Up: the chunk of every child of x. Down: what reached the parent, or at a root the children's chunks.
    if (up || parent[t][above] < 0)
      for (int y : children[t][up ? x : above]) tr.needs.push_back(position[key(true, t, y, c)]);
    else
      tr.needs.push_back(position[key(false, t, above, c)]);
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
