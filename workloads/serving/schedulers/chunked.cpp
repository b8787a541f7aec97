// Chunked prefill (Sarathi-Serve; vLLM with chunked prefill): every iteration mixes decode tokens and
// prefill chunks under each group's token budget. First each decoding request's next token (growing its
// KV, preempting as continuous batching does), then the running requests' unfinished prompts, then newly
// admitted ones (a group running fewer than max_batch, with budget left and blocks for a first chunk),
// each taking a chunk of what is left of its group's budget; a chunk needs the blocks for the KV it
// writes. A prompt longer than the budget runs over several iterations; its first token comes at the
// end of the iteration that prefills its last chunk.
#include <algorithm>

#include "workloads/serving/schedulers/pool.hpp"

namespace ultrasim {

ServingSchedule schedule_chunked(const std::vector<ServingRequest>& requests, std::vector<ServingPool>& pools,
                                 const SchedulerOptions& options) {
  const ServingPool& pool = pools.at(0);
  check_requests_fit(requests, pool, options, false);
  ServingSchedule out = start_schedule(requests);
  PoolRun run(0, pool, requests, out, options);
  run.arrive_all();
  while (run.next()) {
    std::vector<std::uint64_t> budget(static_cast<std::size_t>(pool.groups), options.token_budget);
    std::vector<IterationPart> parts = run.decode_parts(&budget);
    std::vector<std::size_t> prefilling;
    for (const auto& r : run.running())
      if (!r.decoding()) prefilling.push_back(r.id);
    for (const std::size_t id : prefilling) {
      const LiveRequest* r = run.running(id);
      if (!r || budget[r->group] == 0) continue;
      const int g = r->group;
      const std::uint64_t n = std::min(r->target - r->prefilled, budget[g]);
      if (run.grow(id, r->prefilled + n)) parts.push_back({id, n, false}), budget[g] -= n;
    }
    while (const LiveRequest* head = run.head()) {
      const std::size_t id = head->id;
      const std::uint64_t first = std::min(head->target, options.token_budget);  // blocks for a first chunk
      const int g = run.admit_head(first, -1, &budget, 1);
      if (g < 0) break;
      const std::uint64_t n = std::min(first, budget[g]);
      parts.push_back({id, n, false}), budget[g] -= n;
    }
    run.run(parts);
  }
  return out;
}

}  // namespace ultrasim
