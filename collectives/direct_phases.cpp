#include "collectives/direct_phases.hpp"

#include "collectives/cost.hpp"

namespace ultrasim {

void direct_reduce_scatter(Chip& me, int step) {
  const int p = me.size(), r = me.rank();
  std::vector<RequestPtr> received, all;
  for (int k = 1; k < p; ++k) received.push_back(me.recv((r + p - k) % p, step));
  all = received;
  for (int k = 1; k < p; ++k) all.push_back(me.send((r + k) % p, step, {(r + k) % p}));
  me.wait(all);
  for (const auto& in : received) me.reduce(in);
}

void direct_all_gather(Chip& me, int step) {
  const int p = me.size(), r = me.rank();
  std::vector<RequestPtr> received, all;
  for (int k = 1; k < p; ++k) received.push_back(me.recv((r + p - k) % p, step));
  all = received;
  for (int k = 1; k < p; ++k) all.push_back(me.send((r + k) % p, step, {r}));
  me.wait(all);
  for (const auto& in : received) me.copy(in);
}

double direct_reduce_scatter_time(const CostInput& in) {
  if (in.p < 2) return 0;
  auto parts = even_chunks(in.bytes, in.p);
  return concurrent_flows_time(in, [&](int, int dst) { return parts[dst]; }) +
         (in.p - 1) * in.reduce_time(parts.front());
}

double direct_all_gather_time(const CostInput& in) {
  if (in.p < 2) return 0;
  auto parts = even_chunks(in.bytes, in.p);
  return concurrent_flows_time(in, [&](int src, int) { return parts[src]; });
}

}  // namespace ultrasim
