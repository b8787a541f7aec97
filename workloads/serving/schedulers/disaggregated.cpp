// Prefill/decode disaggregation (DistServe, Splitwise): two pools of chips with layouts of their own.
// The prefill pool runs prefill-only iterations, admitting the queue's head while the batch, the token
// budget and a group's KV allow; a request's first token comes at the end of its prefill (TTFT), and its
// KV then moves over the fabric to a decode group (round robin): the iteration's transfers run together,
// alone on the fabric, and the request joins the decode pool's queue when they end. Its decode group is
// the one with the most room when its prefill ends (free blocks less the KV already on its way there). The
// decode pool runs continuous batching over the requests that have arrived with their KV, admitting each
// whose group has room (one whose group is full does not hold back the others): decode iterations,
// growing and preempting as continuous batching does (a preempted request recomputes its KV there). The two
// pools run side by side: whichever can start first runs its next iteration.
#include "workloads/serving/schedulers/pool.hpp"

namespace ultrasim {

ServingSchedule schedule_disaggregated(const std::vector<ServingRequest>& requests,
                                       std::vector<ServingPool>& pools, const SchedulerOptions& options) {
  const ServingPool &prefill_pool = pools.at(0), &decode_pool = pools.at(1);
  check_requests_fit(requests, prefill_pool, options, true);
  check_requests_fit(requests, decode_pool, options, false);
  ServingSchedule out = start_schedule(requests);
  PoolRun prefill(0, prefill_pool, requests, out, options), decode(1, decode_pool, requests, out, options);
  prefill.arrive_all();
  std::vector<int> to_group(requests.size(), 0);
  std::vector<std::uint64_t> promised(static_cast<std::size_t>(decode_pool.groups), 0);  // KV on its way
  for (;;) {
    const double tp = prefill.ready_at(), td = decode.ready_at();
    if (tp == std::numeric_limits<double>::infinity() && td == tp) break;
    std::vector<IterationPart> parts;
    if (tp <= td) {
      prefill.wait_until(tp);
      std::vector<std::uint64_t> budget(static_cast<std::size_t>(prefill_pool.groups), options.token_budget);
      while (const LiveRequest* head = prefill.head()) {
        const std::size_t id = head->id;
        const std::uint64_t n = head->target;
        const int g = prefill.admit_head(n, -1, &budget, n);
        if (g < 0) break;
        parts.push_back({id, n, false}), budget[g] -= n;
      }
      const std::vector<LiveRequest> handed = prefill.run(parts, true);
      if (handed.empty()) continue;
      std::vector<KvMove> moves;
      for (const LiveRequest& r : handed) {  // to the decode group with the most room
        int best = 0;
        auto room = [&](int g) {
          return static_cast<double>(decode.free_blocks(g)) - static_cast<double>(promised[g]);
        };
        for (int g = 1; g < decode_pool.groups; ++g)
          if (room(g) > room(best)) best = g;
        to_group[r.id] = best, promised[best] += decode.blocks_for(r.prompt);
        moves.push_back({r.id, r.group, to_group[r.id], r.prompt});
      }
      const double seconds = options.transfer ? options.transfer(moves) : 0;
      for (const LiveRequest& r : handed) {
        out.requests[r.id].kv_transfer_s = seconds;
        decode.arrive(r.id, prefill.clock() + seconds, true);
      }
      continue;
    }
    decode.wait_until(td);
    // The requests that arrived with their KV (or were preempted here), in order; one whose group is
    // full waits without holding back those of other groups.
    for (std::size_t k = 0; k < decode.arrived();) {
      const LiveRequest& w = decode.waiting_at(k);
      const std::size_t id = w.id;
      const bool prefilled = w.decoding();
      const std::uint64_t n = w.target;
      if (decode.admit_waiting(k, prefilled ? n : 0, to_group[id]) < 0) {
        ++k;
        continue;
      }
      if (prefilled) {
        const std::uint64_t b = decode.blocks_for(requests[id].prompt);
        promised[to_group[id]] -= std::min(promised[to_group[id]], b);
      } else {
        parts.push_back({id, n, false});
      }
    }
    for (const IterationPart& p : parts) decode.grow(p.request, p.tokens);  // a recompute's KV
    for (const IterationPart& p : decode.decode_parts()) parts.push_back(p);
    decode.run(parts);
  }
  return out;
}

}  // namespace ultrasim
