// Continuous batching (vLLM's default scheduler without chunked prefill): in an iteration a group either
// prefills its newly admitted requests or decodes every one it runs (each data-parallel group is an engine
// of its own; the groups step together). Prefill comes first: the queue's head is admitted
// while a group runs fewer than max_batch requests, has its token budget left for the prompt and blocks
// for its KV (the one with the most free blocks takes it); a group that admitted any prefills them, the
// others decode each running request, growing
// its KV by a block when its next token needs one and preempting the group's last admitted requests
// (recompute: freed and back at the queue's front) while the group has none free.
#include "workloads/serving/schedulers/pool.hpp"

namespace ultrasim {

ServingSchedule schedule_continuous(const std::vector<ServingRequest>& requests,
                                    std::vector<ServingPool>& pools, const SchedulerOptions& options) {
  const ServingPool& pool = pools.at(0);
  check_requests_fit(requests, pool, options, true);
  ServingSchedule out = start_schedule(requests);
  PoolRun run(0, pool, requests, out, options);
  run.arrive_all();
  while (run.next()) {
    std::vector<IterationPart> parts;
    std::vector<std::uint64_t> budget(static_cast<std::size_t>(pool.groups), options.token_budget);
    while (const LiveRequest* head = run.head()) {
      const std::size_t id = head->id;
      const std::uint64_t n = head->target;
      const int g = run.admit_head(n, -1, &budget, n);
      if (g < 0) break;
      parts.push_back({id, n, false}), budget[g] -= n;
    }
    for (const IterationPart& p : parts) budget[run.running(p.request)->group] = 0;  // these prefill
    for (const IterationPart& p : run.decode_parts(&budget)) parts.push_back(p);     // the rest decode
    run.run(parts);
  }
  return out;
}

}  // namespace ultrasim
