#include "collectives/ring_pass.hpp"

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
    if (on_arrival == OnArrival::kReduce)
      me.reduce(received);
    else
      me.copy(received);
  }
}

void ring_pass_time(const CostInput& in, std::vector<double>& clock, int offset, OnArrival on_arrival) {
  const int p = in.p;
  auto chunk = [p](int i) { return ((i % p) + p) % p; };
  const auto bytes = even_chunks(in.bytes, p);
  std::vector<double> alpha(p), beta(p);  // of the hop r -> r+1
  for (int r = 0; r < p; ++r) alpha[r] = in.alpha(r, (r + 1) % p), beta[r] = in.bandwidth(r, (r + 1) % p);
  for (int s = 0; s < p - 1; ++s) {
    std::vector<double> next(p);
    for (int r = 0; r < p; ++r) {
      int left = (r + p - 1) % p;
      double sent = clock[r] + bytes[chunk(r + offset - s)] / beta[r];
      std::uint64_t incoming = bytes[chunk(left + offset - s)];
      double arrived = clock[left] + alpha[left] + incoming / beta[left];
      next[r] = std::max(sent, arrived) + (on_arrival == OnArrival::kReduce ? in.reduce_time(incoming) : 0.0);
    }
    clock = std::move(next);
  }
}

double ring_passes_time(const CostInput& in, const std::vector<RingPass>& passes) {
  if (in.p < 2) return 0;
  std::vector<double> clock(in.p, 0.0);
  for (const RingPass& pass : passes) ring_pass_time(in, clock, pass.offset, pass.on_arrival);
  return *std::max_element(clock.begin(), clock.end());
}

}  // namespace ultrasim
