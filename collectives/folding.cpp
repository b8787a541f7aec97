#include "collectives/folding.hpp"

namespace ultrasim {

Folding::Folding(int chips) : p(chips), pof2(1), rem(0), log2(0) {
  while (pof2 * 2 <= p) pof2 *= 2, ++log2;
  rem = p - pof2;
}

std::vector<int> Folding::parts(int v) const {
  return v < rem ? std::vector<int>{2 * v, 2 * v + 1} : std::vector<int>{v + rem};
}

std::vector<int> Folding::parts(const std::vector<int>& blocks) const {
  std::vector<int> out;
  for (int b : blocks)
    for (int part : parts(b)) out.push_back(part);
  return out;
}

void fold_in(Chip& me, const Folding& f, const std::vector<int>& slots, OnArrival on_arrival) {
  const int r = me.rank();
  if (f.folds_away(r)) me.wait({me.send(r + 1, 0, slots)});
  if (f.folds_in(r)) {
    auto in = me.recv(r - 1, 0);
    me.wait({in});
    me.accept(in, on_arrival);
  }
}

void fold_out(Chip& me, const Folding& f, int step, const std::vector<int>& slots) {
  const int r = me.rank();
  if (f.folds_in(r)) me.wait({me.send(r - 1, step, slots)});
  if (f.folds_away(r)) {
    auto in = me.recv(r + 1, step);
    me.wait({in});
    me.copy(in);
  }
}

int halving_bit(const Folding& f, int step) {
  return (f.pof2 >> step) / 2;
}

std::vector<int> halving_blocks_sent(const Folding& f, int v, int step) {
  int size = f.pof2 >> step, lo = v & ~(size - 1), half = size / 2;
  return (v & half) ? slot_range(lo, half) : slot_range(lo + half, half);
}

int doubling_bit(int step) {
  return 1 << step;
}

std::vector<int> doubling_blocks_sent(int v, int step) {
  int size = 1 << step;
  return slot_range(v & ~(size - 1), size);
}

}  // namespace ultrasim
