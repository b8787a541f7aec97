// The two trees of the double-binary-tree all-reduce and its schedule (Sanders, Speck & Träff, "Two-tree
// algorithms for full bandwidth broadcast, reduction and scan", Parallel Computing 35(12), 2009; the
// trees are NCCL's, src/graph/trees.cc, NCCL 2.4).
//   tree 0: the in-order binary tree over the ranks: r's parent clears r's lowest set bit and sets the next
//   one up (only clears it when that leaves the range); root 0, the odd ranks are its leaves;
//   tree 1: tree 0 mirrored (r -> p-1-r) for even p, shifted (r -> r+1) for odd p. A chip is interior in
//   at most one tree (for odd p chip 0 has one child in each), so it has at most two children in all;
//   colour the edges 0/1 so that a chip's two edges to its parents differ and its two edges to its
//   children differ: in the bipartite graph (chip as child, chip as parent) every vertex has degree <= 2,
//   so the edges form paths and even cycles and two colours suffice (König);
//   rounds: chunk c crosses an edge in the first round of the edge's colour that comes after its inputs
//   arrived and two rounds after the edge's previous chunk. So in a round a chip sends at most one chunk
//   and receives at most one; the reduction (up) takes about 2(C + height) rounds, then the broadcast
//   (down) as many.
#pragma once

#include <vector>

namespace ultrasim {

// The parent of chip r in tree 0 or 1 over p chips; -1 for the tree's root.
int two_tree_parent(int p, int tree, int r);

// One transfer of the all-reduce: in the reduction (reduce = true) a chip sends chunk c of tree t to its
// parent, which adds it; in the broadcast the parent sends the sum back and the chip keeps it.
struct TreeTransfer {
  int round = 0, src = 0, dst = 0;
  int slot = 0;  // t * chunks + c
  bool reduce = false;
  std::vector<int> needs;  // transfers src must have received first (indices into the schedule)
};

// Every transfer of the all-reduce over p chips with `chunks` chunks per tree, in round order.
std::vector<TreeTransfer> two_tree_schedule(int p, int chunks);

class Chip;

// What a chip receives in the schedule, each transfer taken once, when first needed: take(i) posts the
// receive of transfers[i], waits for it, and adds (reduction) or keeps (broadcast) what arrived.
class TreeInbox {
 public:
  TreeInbox(Chip& me, const std::vector<TreeTransfer>& transfers);
  void take(int i);

 private:
  Chip& me_;
  const std::vector<TreeTransfer>& transfers_;
  std::vector<char> taken_;
};

}  // namespace ultrasim
