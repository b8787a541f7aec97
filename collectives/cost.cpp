#include "collectives/cost.hpp"

#include <algorithm>
#include <map>

#include "topology/registry.hpp"

namespace ultrasim {

int ceil_log2(int p) {
  int k = 0;
  while ((1 << k) < p) ++k;
  return k;
}

double rounds_time(const CostInput& in, int rounds,
                   const std::function<void(int round, std::vector<RoundTransfer>& out)>& round_transfers) {
  std::vector<double> clock(in.p, 0.0), next(in.p), reduced(in.p);
  std::vector<RoundTransfer> transfers;
  for (int k = 0; k < rounds; ++k) {
    transfers.clear();
    round_transfers(k, transfers);
    next = clock;
    std::fill(reduced.begin(), reduced.end(), 0.0);
    for (const RoundTransfer& t : transfers) {
      double left = clock[t.src] + static_cast<double>(t.bytes) / in.bandwidth(t.src, t.dst);
      next[t.src] = std::max(next[t.src], left);
      next[t.dst] = std::max(next[t.dst], left + in.alpha(t.src, t.dst));
      if (t.reduce) reduced[t.dst] += in.reduce_time(t.bytes);
    }
    for (int r = 0; r < in.p; ++r) clock[r] = next[r] + reduced[r];
  }
  return in.p > 0 ? *std::max_element(clock.begin(), clock.end()) : 0.0;
}

double concurrent_flows_time(const CostInput& in, const std::function<std::uint64_t(int, int)>& bytes) {
  const Topology& t = in.routes.topology();
  std::vector<double> load_up(t.links().size(), 0.0), load_down(t.links().size(), 0.0);
  double latency = 0;
  for (int a = 0; a < in.p; ++a)
    for (int b = 0; b < in.p; ++b) {
      std::uint64_t n = a == b ? 0 : bytes(a, b);
      if (n == 0) continue;
      // Each path the message takes carries its part (striped: split as the fabric splits it).
      in.routes.for_each_flow(in.chip(a), in.chip(b), n, [&](const PathShare& share, std::uint64_t part) {
        latency = std::max(latency, share.path.latency + in.transfer_overhead);
        for (const Hop& hop : share.path.hops)
          (hop.up ? load_up : load_down)[hop.link] += static_cast<double>(part);
      });
    }
  double busiest = 0;
  for (std::size_t i = 0; i < t.links().size(); ++i) {
    double bw = t.links()[i].bandwidth();
    busiest = std::max({busiest, load_up[i] / bw, load_down[i] / bw});
  }
  return latency + busiest;
}

double concurrent_flows_time(const CostInput& in, const std::map<std::pair<int, int>, std::uint64_t>& flows) {
  if (flows.empty()) return 0;
  return concurrent_flows_time(in, [&](int a, int b) {
    auto it = flows.find({a, b});
    return it == flows.end() ? std::uint64_t{0} : it->second;
  });
}

double lower_bound_s(CollectiveKind kind, const CostInput& in, double efficiency) {
  const int p = in.p;
  if (p < 2) return 0;
  const Topology& t = in.routes.topology();
  auto parts = even_chunks(in.bytes, p);
  const double n = static_cast<double>(in.bytes);
  const TrafficMatrix traffic =
      kind == CollectiveKind::kAlltoallv ? in.traffic_matrix() : TrafficMatrix::uniform(0, p);
  const bool reducing = switches_reduce(t.params());
  double slowest = 0;
  for (int r = 0; r < p; ++r) {
    double must = 0;  // bytes chip r must send or receive, whichever is larger
    switch (kind) {
      // Every chip sends and receives at least 2(p-1)/p of the buffer (Patarasuk & Yuan 2009).
      // Where switches reduce, it need only send its buffer once and receive the sum once.
      case CollectiveKind::kAllreduce:
        must = reducing ? n : 2.0 * (p - 1) / p * n;
        break;
      // It must receive every part but its own.
      case CollectiveKind::kAllgather:
        must = n - parts[r];
        break;
      // Its contribution to every other chip's part must leave it.
      case CollectiveKind::kReducescatter:
        must = n - parts[r];
        break;
      // It sends every part but its own and receives p-1 parts of its own size.
      case CollectiveKind::kAlltoall:
        must = std::max(n - parts[r], static_cast<double>(p - 1) * parts[r]);
        break;
      // Its row or its column, whichever is larger, own part excluded (it is copied locally).
      case CollectiveKind::kAlltoallv:
        must = static_cast<double>(traffic.fabric_load(r));
        break;
      // The root sends (broadcast) or receives (reduce) at least the buffer; so does every other chip.
      case CollectiveKind::kBroadcast:
      case CollectiveKind::kReduce:
        must = n;
        break;
    }
    slowest = std::max(slowest, must * efficiency / t.injection_bandwidth(in.chip(r)));
  }
  if (kind == CollectiveKind::kAlltoallv && slowest == 0) return 0;  // nothing crosses the fabric
  return in.routes.min_chip_latency() + in.transfer_overhead + slowest;
}

}  // namespace ultrasim
