// Serving schedulers: which requests run in each iteration of a deployment's chip pool, as arrivals come
// (`ultrasim serve --scheduler NAME`). Free of SimGrid and of the fabric: a pool is its data-parallel
// groups, their KV caches in blocks, and a function that prices an iteration
// (workloads/serving/production_run.cpp gives the fabric's; the tests give closed forms). One registry, one
// file per scheduler; the rules are in workloads/serving/README.md ("ServingRequest arrivals").
//
// Time is simulated seconds from the first arrival. A request's tokens: the first comes when its prefill
// ends (TTFT = that iteration's end - arrival), each later one at the end of a decode iteration that ran
// it; its last token ends it. KV: a request holds ceil(tokens with KV / block_tokens) blocks of its
// group; a group's blocks never exceed kv_blocks (tested at the edge).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "topology/base/progress.hpp"
#include "workloads/serving/requests.hpp"
#include "workloads/serving/serving.hpp"

namespace ultrasim {

// One pool of chips as a scheduler sees it.
struct ServingPool {
  std::string name = "pool";    // pool | prefill | decode
  int groups = 1;               // data-parallel groups, each with a KV cache of its own
  std::uint64_t kv_blocks = 0;  // per group
  std::uint64_t block_tokens = 16;
  std::function<double(const std::vector<StepItem>&)> step;  // an iteration's seconds
};

// A request's KV moving from the prefill pool to the decode pool.
struct KvMove {
  std::size_t request = 0;
  int from_group = 0, to_group = 0;
  std::uint64_t tokens = 0;
};

struct SchedulerOptions {
  std::uint64_t max_batch = 256;      // requests a data-parallel group runs at once (vLLM's max_num_seqs)
  std::uint64_t token_budget = 8192;  // tokens of a group in one iteration (vLLM's max_num_batched_tokens)
  // Disaggregated: the seconds of moving a prefill iteration's KV to the decode pool, alone.
  std::function<double(const std::vector<KvMove>&)> transfer;
  Progress* progress = nullptr;  // when set, advanced by one as each request finishes
};

struct RequestTimes {
  double arrival_s = 0, first_token_s = -1, last_token_s = -1, finish_s = -1;
  double kv_transfer_s = 0;  // disaggregated: the transfer it was part of
  std::uint64_t preemptions = 0;
  int group = -1;  // its (decode) group
};

struct ServingIteration {
  int pool = 0;
  double start_s = 0, end_s = 0;
  std::uint64_t requests = 0, prefill_tokens = 0, decode_tokens = 0;
  std::uint64_t kv_blocks = 0;  // held at its end, over every group
  std::uint64_t preempted = 0;
};

struct ServingSchedule {
  std::vector<RequestTimes> requests;  // in the trace's order
  std::vector<double> itl_s;           // every gap between two consecutive tokens of a request
  std::vector<ServingIteration> iterations;
};

struct SchedulerEntry {
  std::string name, rule;  // rule: one line (the README has the paragraph)
  int pools;               // 1, or 2: prefill and decode
  ServingSchedule (*run)(const std::vector<ServingRequest>& requests, std::vector<ServingPool>& pools,
                         const SchedulerOptions& options);
};

const std::vector<SchedulerEntry>& serving_schedulers();
// InputError "unknown scheduler 'x' (did you mean ...?)".
const SchedulerEntry& scheduler_entry(const std::string& name);

// Every request's KV at its longest fits a group, and (budgeted schedulers) its prompt fits the token
// budget; InputError naming the first that does not.
void check_requests_fit(const std::vector<ServingRequest>& requests, const ServingPool& pool,
                        const SchedulerOptions& options, bool budgeted);

ServingSchedule schedule_static(const std::vector<ServingRequest>&, std::vector<ServingPool>&,
                                const SchedulerOptions&);
ServingSchedule schedule_continuous(const std::vector<ServingRequest>&, std::vector<ServingPool>&,
                                    const SchedulerOptions&);
ServingSchedule schedule_chunked(const std::vector<ServingRequest>&, std::vector<ServingPool>&,
                                 const SchedulerOptions&);
ServingSchedule schedule_disaggregated(const std::vector<ServingRequest>&, std::vector<ServingPool>&,
                                       const SchedulerOptions&);

}  // namespace ultrasim
