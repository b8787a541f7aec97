// MPICH's folding of p chips onto the largest power of two p' <= p, and the block ranges of recursive
// halving and doubling over those p' "virtual" chips (Thakur, Rabenseifner & Gropp 2005).
//   rem = p - p'. Of chips 0..2rem-1, each even chip folds into the odd chip after it, which then
//   stands for both; chips from 2rem on keep going alone. Virtual rank v: chip 2v+1 for v < rem,
//   chip v+rem otherwise.
#pragma once

#include <vector>

#include "collectives/chip.hpp"

namespace ultrasim {

struct Folding {
  explicit Folding(int chips);
  int p, pof2, rem, log2;  // log2 = log2(pof2)

  bool folds_away(int r) const { return r < 2 * rem && r % 2 == 0; }  // hands its data to r+1
  bool folds_in(int r) const { return r < 2 * rem && r % 2 == 1; }    // receives r-1's data
  int virtual_rank(int r) const { return r >= 2 * rem ? r - rem : (folds_in(r) ? r / 2 : -1); }
  int chip(int v) const { return v < rem ? 2 * v + 1 : v + rem; }
  // The chips (and so the parts, when a buffer has one part per chip) that virtual chip v stands for.
  std::vector<int> parts(int v) const;
  // The parts that the virtual chips `blocks` stand for, in order.
  std::vector<int> parts(const std::vector<int>& blocks) const;
};

// Step 0 of a folded algorithm: each even chip below 2rem sends `slots` to the chip after it, which
// reduces or keeps them.
void fold_in(Chip& me, const Folding& f, const std::vector<int>& slots, OnArrival on_arrival);
// The last step, labelled `step`: each odd chip below 2rem sends `slots` back to the chip before it.
void fold_out(Chip& me, const Folding& f, int step, const std::vector<int>& slots);

// Recursive halving over p' blocks, step s = 0 .. log2-1: virtual chip v swaps with v ^ bit and sends the
// half of its current range that does not hold block v; after the last step v holds block v.
int halving_bit(const Folding& f, int step);
std::vector<int> halving_blocks_sent(const Folding& f, int v, int step);
// Recursive doubling, step s = 0 .. log2-1: v swaps with v ^ (1 << s) the 2^s blocks it holds (those
// that share its bits above s), doubling them.
int doubling_bit(int step);
std::vector<int> doubling_blocks_sent(int v, int step);

}  // namespace ultrasim
