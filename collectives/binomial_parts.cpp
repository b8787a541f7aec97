#include "collectives/binomial_parts.hpp"

#include <algorithm>

namespace ultrasim {
namespace {

int lowest_bit(int v, int p) {
  int mask = 1;
  while (mask < p && !(v & mask)) mask <<= 1;
  return mask;  // p (or more) for the root
}

std::uint64_t bytes_of(const std::vector<int>& parts, const std::vector<std::uint64_t>& sizes) {
  std::uint64_t total = 0;
  for (int part : parts) total += sizes[part];
  return total;
}

}  // namespace

std::vector<int> parts_from(int v, int span, int p) {
  return slot_range(v, std::min(v + span, p) - v);
}

void binomial_scatter(Chip& me, int first_step) {
  const int p = me.size(), v = (me.rank() - kRoot + p) % p;
  int mask = lowest_bit(v, p);
  if (v != 0) {
    auto in = me.recv((v - mask + kRoot) % p, first_step + ceil_log2(mask));
    me.wait({in});
    me.copy(in);
  }
  for (int child = mask / 2; child > 0; child /= 2)
    if (v + child < p)
      me.wait(
          {me.send((v + child + kRoot) % p, first_step + ceil_log2(child), parts_from(v + child, child, p))});
}

void binomial_gather(Chip& me, int first_step) {
  const int p = me.size(), v = (me.rank() - kRoot + p) % p;
  for (int mask = 1; mask < p; mask <<= 1) {
    if (v & mask) {
      me.wait({me.send((v - mask + kRoot) % p, first_step + ceil_log2(mask), parts_from(v, mask, p))});
      return;
    }
    if (v + mask < p) {
      auto in = me.recv((v + mask + kRoot) % p, first_step + ceil_log2(mask));
      me.wait({in});
      me.copy(in);
    }
  }
}

void binomial_scatter_rounds(int p, int k, const std::vector<std::uint64_t>& sizes,
                             std::vector<RoundTransfer>& out) {
  const int child = 1 << (ceil_log2(p) - 1 - k);  // the root's first send goes farthest
  for (int v = 0; v + child < p; v += 2 * child)
    out.push_back(
        {(v + kRoot) % p, (v + child + kRoot) % p, bytes_of(parts_from(v + child, child, p), sizes), false});
}

void binomial_gather_rounds(int p, int k, const std::vector<std::uint64_t>& sizes,
                            std::vector<RoundTransfer>& out) {
  const int mask = 1 << k;
  for (int v = 0; v + mask < p; v += 2 * mask)
    out.push_back(
        {(v + mask + kRoot) % p, (v + kRoot) % p, bytes_of(parts_from(v + mask, mask, p), sizes), false});
}

}  // namespace ultrasim
