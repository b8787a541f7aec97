// Static batches (`ultrasim serve` without arrivals, one batch after another): when nothing runs, the
// requests that have arrived (first come first served) form a batch, request i of it on group i mod
// groups (max_batch per group) with the blocks of its longest KV reserved; one iteration prefills every
// prompt whole, then decode iterations run the batch's unfinished requests until the last one ends. Nothing
// joins a running batch, and nothing is preempted.
#include "workloads/serving/schedulers/pool.hpp"

namespace ultrasim {

ServingSchedule schedule_static(const std::vector<ServingRequest>& requests, std::vector<ServingPool>& pools,
                                const SchedulerOptions& options) {
  const ServingPool& pool = pools.at(0);
  check_requests_fit(requests, pool, options, false);
  ServingSchedule out = start_schedule(requests);
  PoolRun run(0, pool, requests, out, options);
  run.arrive_all();
  while (run.next()) {
    std::vector<IterationPart> parts;
    if (run.running().empty()) {
      while (const LiveRequest* head = run.head()) {
        const std::size_t id = head->id;
        const std::uint64_t n = head->target, longest = head->prompt + head->output - 1;
        if (run.admit_head(longest, static_cast<int>(parts.size() % static_cast<std::size_t>(pool.groups))) <
            0)
          break;
        parts.push_back({id, n, false});
      }
    } else {
      parts = run.decode_parts();
    }
    run.run(parts);
  }
  return out;
}

}  // namespace ultrasim
