// What the schedulers share: one pool's requests in flight, their KV blocks, and running an iteration.
// A scheduler's file says which requests an iteration takes; this runs it and keeps the books.
#pragma once

#include <deque>
#include <limits>
#include <vector>

#include "workloads/serving/schedulers/scheduler.hpp"

namespace ultrasim {

// A request in a pool. It prefills `target` tokens (its prompt; after a preemption, the prompt and what
// it had generated, recomputed), then decodes; `prefilled` of the target have their KV.
struct LiveRequest {
  std::size_t id = 0;
  int group = -1;
  std::uint64_t prompt = 0, output = 0, target = 0, prefilled = 0, generated = 0, blocks = 0;
  std::uint64_t admitted = 0;  // admission order (the last admitted is preempted first)
  bool handed = false;         // leaving for the decode pool
  bool decoding() const { return prefilled == target && generated > 0; }
  std::uint64_t decode_context() const { return prompt + generated - 1; }
};

// One part of an iteration: `tokens` of a running request (decode: its next token).
struct IterationPart {
  std::size_t request;  // its id
  std::uint64_t tokens;
  bool decode;
};

// A schedule with a row per request, its arrival set.
ServingSchedule start_schedule(const std::vector<ServingRequest>& requests);

class PoolRun {
 public:
  // options.max_batch: the requests one group runs at once; options.progress: advanced as each finishes.
  PoolRun(int index, const ServingPool& pool, const std::vector<ServingRequest>& requests,
          ServingSchedule& out, const SchedulerOptions& options);

  // ServingRequest `id` joins at `at` (its arrival; in a decode pool, its transfer's end). `prefilled`: its
  // prompt's KV and first token were made elsewhere (a decode pool).
  void arrive(std::size_t id, double at, bool prefilled);
  // Every request at its arrival.
  void arrive_all();
  // Waits until the next iteration can start; false when nothing is left.
  bool next();
  // When the next iteration can start: now if a request waits (arrived) or runs, else the next arrival
  // (infinity: nothing left).
  double ready_at() const;
  double clock() const { return clock_; }
  void wait_until(double t) { clock_ = std::max(clock_, t); }

  // The first waiting request that has arrived by now, or nullptr.
  const LiveRequest* head() const;
  // Admits the head into the group with the most free blocks among those (`group` >= 0: that one only)
  // that run fewer than max_batch requests, have blocks for `kv_tokens` of it and (with `budget`) at
  // least `need` tokens of their budget left; the group, or -1 when none can take it.
  int admit_head(std::uint64_t kv_tokens, int group = -1, const std::vector<std::uint64_t>* budget = nullptr,
                 std::uint64_t need = 0);
  // The waiting requests that have arrived by now (the first ones of the queue), the k-th of them, and
  // admit_head for it: a scheduler may admit past a request that cannot be admitted yet.
  std::size_t arrived() const;
  const LiveRequest& waiting_at(std::size_t k) const { return waiting_[k].second; }
  int admit_waiting(std::size_t k, std::uint64_t kv_tokens, int group = -1,
                    const std::vector<std::uint64_t>* budget = nullptr, std::uint64_t need = 0);
  std::uint64_t running_in(int group) const { return in_group_[group]; }
  // Blocks for `kv_tokens` of running request `id`, preempting the group's last admitted requests
  // (recompute: back to the front of the queue, their KV freed) while the group lacks them; false when
  // `id` itself was preempted.
  bool grow(std::size_t id, std::uint64_t kv_tokens);

  const std::vector<LiveRequest>& running() const { return running_; }
  const LiveRequest* running(std::size_t id) { return find(id); }
  // The next token of each decoding request, in admission order, each with the block it needs (grow:
  // this may preempt later ones); with `budget`, while its group has budget left, taking one each.
  std::vector<IterationPart> decode_parts(std::vector<std::uint64_t>* budget = nullptr);
  std::size_t waiting() const { return waiting_.size(); }
  std::uint64_t free_blocks(int group) const { return free_[group]; }
  std::uint64_t blocks_for(std::uint64_t tokens) const {
    return (tokens + pool_.block_tokens - 1) / pool_.block_tokens;
  }

  // Runs `parts` from now (priced by the pool), emits their tokens and retires finished requests; with
  // `hand_off`, a request whose prefill ends leaves the pool after its first token (returned, its KV
  // freed) instead of decoding here.
  std::vector<LiveRequest> run(const std::vector<IterationPart>& parts, bool hand_off = false);

 private:
  LiveRequest* find(std::size_t id);
  void reindex();  // slot_ after running_ changed
  void emit(LiveRequest& r, double at);

  int index_;
  const ServingPool& pool_;
  const std::vector<ServingRequest>& requests_;
  ServingSchedule& out_;
  double clock_ = 0;
  std::deque<std::pair<double, LiveRequest>> waiting_;  // (ready at, request), in order
  std::vector<LiveRequest> running_;                    // in admission order
  std::vector<std::uint64_t> free_, in_group_;          // per group: free blocks, running requests
  std::uint64_t max_batch_;
  Progress* progress_;
  std::vector<std::size_t> slot_;  // per request: its index in running_ while it runs
  std::uint64_t admissions_ = 0, preempted_ = 0, stalled_ = 0;
};

}  // namespace ultrasim
