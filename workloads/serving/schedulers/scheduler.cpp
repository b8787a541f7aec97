#include "workloads/serving/schedulers/scheduler.hpp"

#include "topology/base/errors.hpp"
#include "topology/base/suggest.hpp"

namespace ultrasim {

const std::vector<SchedulerEntry>& serving_schedulers() {
  static const std::vector<SchedulerEntry> table{
      {"static", "batches of the arrived requests, each run to its end before the next (today's serve)", 1,
       schedule_static},
      {"continuous",
       "continuous batching: prefill the admitted, else decode all; preempt (recompute) when KV runs out", 1,
       schedule_continuous},
      {"chunked", "chunked prefill (Sarathi-Serve): decode tokens and prefill chunks share a token budget", 1,
       schedule_chunked},
      {"disaggregated",
       "prefill and decode on separate chip pools, the KV moved over the fabric (DistServe, Splitwise)", 2,
       schedule_disaggregated},
  };
  return table;
}

const SchedulerEntry& scheduler_entry(const std::string& name) {
  return find_by_name(serving_schedulers(), name, "scheduler");
}

void check_requests_fit(const std::vector<ServingRequest>& requests, const ServingPool& pool,
                        const SchedulerOptions& options, bool budgeted) {
  const auto blocks = [&](std::uint64_t tokens) {
    return (tokens + pool.block_tokens - 1) / pool.block_tokens;
  };
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const ServingRequest& r = requests[i];
    const std::string which = "request " + std::to_string(i) + " (" + std::to_string(r.prompt) +
                              " prompt + " + std::to_string(r.output) + " output tokens)";
    if (budgeted && r.prompt > options.token_budget)
      throw InputError(which + ": its prompt is over the token budget of " +
                       std::to_string(options.token_budget) + " (--token-budget, or --scheduler chunked)");
    const std::uint64_t longest = pool.name == "prefill" ? r.prompt : r.prompt + r.output - 1;
    if (blocks(longest) > pool.kv_blocks)
      throw InputError(which + " needs " + std::to_string(blocks(longest)) + " KV blocks; a group of the " +
                       pool.name + " pool holds " + std::to_string(pool.kv_blocks) +
                       " (more chips per group, --kv-dtype float8, or shorter requests)");
  }
}

}  // namespace ultrasim
