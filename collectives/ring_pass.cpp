#include "collectives/ring_pass.hpp"

#include "collectives/cost.hpp"

#include <algorithm>

namespace ultrasim {

void ring_pass(Chip& me, int first_step, int offset, OnArrival on_arrival) {
  const int p = me.size(), r = me.rank();
  const int right = (r + 1) % p, left = (r + p - 1) % p;
  auto chunk = [p](int i) { return ((i % p) + p) % p; };
  for (int s = 0; s < p - 1; ++s) {
    auto sent = me.send(right, first_step + s, {chunk(r + offset - s)});
    auto received = me.recv(left, first_step + s);
    me.wait({sent, received});
    me.accept(received, on_arrival);
  }
}

double ring_passes_time(const CostInput& in, const std::vector<RingPass>& passes) {
  const int p = in.p;
  if (p < 2) return 0;
  auto chunk = [p](int i) { return ((i % p) + p) % p; };
  const auto bytes = even_chunks(in.bytes, p);
  return rounds_time(
      in, static_cast<int>(passes.size()) * (p - 1), [&](int k, std::vector<RoundTransfer>& out) {
        const RingPass& pass = passes[k / (p - 1)];
        const int s = k % (p - 1);
        for (int r = 0; r < p; ++r)
          out.push_back(
              {r, (r + 1) % p, bytes[chunk(r + pass.offset - s)], pass.on_arrival == OnArrival::kReduce});
      });
}

}  // namespace ultrasim
