#include "collectives/ring_pass.hpp"

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

}  // namespace ultrasim
