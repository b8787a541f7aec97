#include "workloads/training/pipeline_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "topology/base/errors.hpp"
#include "topology/base/suggest.hpp"

namespace ultrasim {
namespace {

using Orders = std::vector<std::vector<PipePass>>;

void at_least_depth(int p, int m, const std::string& schedule) {
  if (m < p)
    throw InputError("schedule " + schedule + " needs at least as many micro-batches as pipeline stages: " +
                     std::to_string(m) + " micro-batches for pp " + std::to_string(p) +
                     " (raise --global-batch or lower --micro-batch)");
}

Orders gpipe(int p, int m, int) {
  Orders order(p);
  for (int r = 0; r < p; ++r) {
    for (int i = 0; i < m; ++i) order[r].push_back({true, i, 0});
    for (int i = 0; i < m; ++i) order[r].push_back({false, i, 0});
  }
  return order;
}

// Megatron-LM's 1F1B over m v virtual micro-batches (v = 1: PipeDream-Flush). Virtual micro-batch k is
// micro-batch (k / (p v)) p + k mod p through virtual stage (k mod p v) / p (backwards: v - 1 - that).
Orders one_f_one_b(int p, int m, int v) {
  Orders order(p);
  const int total = m * v;
  auto pass = [&](bool forward, int k) {
    const int group = k % (p * v), chunk = group / p;
    return PipePass{forward, (k / (p * v)) * p + k % p, forward ? chunk : v - 1 - chunk};
  };
  for (int r = 0; r < p; ++r) {
    const int warmup = std::min(total, v == 1 ? p - r - 1 : 2 * (p - r - 1) + (v - 1) * p);
    for (int k = 0; k < warmup; ++k) order[r].push_back(pass(true, k));
    for (int k = 0; k + warmup < total; ++k) {
      order[r].push_back(pass(true, warmup + k));
      order[r].push_back(pass(false, k));
    }
    for (int k = total - warmup; k < total; ++k) order[r].push_back(pass(false, k));
  }
  return order;
}

}  // namespace

const std::vector<PipelineSchedule>& pipeline_schedules() {
  static const std::vector<PipelineSchedule> table{
      {"gpipe", "every forward, then every backward (all micro-batches' activations held)",
       "Huang et al., GPipe (2019)", false, [](int, int, int) {}, gpipe},
      {"1f1b", "warm-up forwards, then one forward and one backward in turn, then the rest (at most p held)",
       "Narayanan et al., PipeDream-Flush (2021); Megatron-LM's default", false,
       [](int p, int m, int) { at_least_depth(p, m, "1f1b"); }, one_f_one_b},
      {"interleaved", "1f1b over v virtual stages per rank: the bubble shrinks v times",
       "Narayanan et al., SC'21; Megatron-LM --num-layers-per-virtual-pipeline-stage", true,
       [](int p, int m, int v) {
         at_least_depth(p, m, "interleaved");
         if (m % p != 0)
           throw InputError("schedule interleaved runs micro-batches in groups of pp: " + std::to_string(m) +
                            " micro-batches is not a multiple of pp " + std::to_string(p));
         if (v < 2) throw InputError("schedule interleaved needs --vp 2 or more virtual stages per rank");
       },
       one_f_one_b},
  };
  return table;
}

const PipelineSchedule& find_schedule(const std::string& name) {
  return find_by_name(pipeline_schedules(), name, "pipeline schedule");
}

double PipelineRun::bubble() const {
  if (busy.empty() || span <= 0) return 0;
  double idle = 0;
  for (double b : busy) idle += (span - b) / span;
  return idle / static_cast<double>(busy.size());
}

std::vector<int> peak_in_flight(const Orders& order) {
  std::vector<int> peak;
  for (const auto& passes : order) {
    int held = 0, most = 0;
    for (const PipePass& pass : passes) {
      held += pass.forward ? 1 : -1;
      most = std::max(most, held);
    }
    peak.push_back(most);
  }
  return peak;
}

PipelineRun run_pipeline(const Orders& order, int p, int m, int v, const PipelineCosts& costs) {
  const int chunks = p * v;
  constexpr double kNotYet = -1;
  // When each (model chunk, micro-batch) pass ended, forward and backward.
  std::vector<std::vector<double>> fwd_end(chunks, std::vector<double>(m, kNotYet)), bwd_end = fwd_end;
  PipelineRun run;
  run.order = order;
  run.busy.assign(p, 0);
  run.end.assign(p, 0);
  run.last_backward.assign(p, 0);
  run.first_forward.assign(p, 0);
  run.start.resize(p);
  run.finish.resize(p);
  std::vector<std::size_t> next(p, 0);
  std::vector<double> free_at(p, 0);
  std::size_t left = 0;
  for (const auto& passes : order) left += passes.size();
  while (left > 0) {
    bool moved = false;
    for (int r = 0; r < p; ++r) {
      while (next[r] < order[r].size()) {
        const PipePass& pass = order[r][next[r]];
        const int j = pass.chunk * p + r;
        // The input: its neighbour chunk's pass of the same micro-batch, sent from that chunk's rank.
        double ready = 0;
        if (pass.forward && j > 0) {
          if (fwd_end[j - 1][pass.micro] < 0) break;
          ready = fwd_end[j - 1][pass.micro] + costs.send((j - 1) % p, r);
        } else if (!pass.forward) {
          const bool last = j == chunks - 1;
          const double in = last ? fwd_end[j][pass.micro] : bwd_end[j + 1][pass.micro];
          if (in < 0) break;
          ready = last ? in : in + costs.send((j + 1) % p, r);
        }
        const double start = std::max(free_at[r], ready);
        const double d = pass.forward ? costs.forward(r, pass.chunk) : costs.backward(r, pass.chunk);
        free_at[r] = start + d;
        (pass.forward ? fwd_end : bwd_end)[j][pass.micro] = free_at[r];
        run.start[r].push_back(start);
        run.finish[r].push_back(free_at[r]);
        run.busy[r] += d;
        if (!pass.forward) run.last_backward[r] = d;
        if (pass.forward && next[r] == 0) run.first_forward[r] = d;
        ++next[r];
        --left;
        moved = true;
      }
    }
    if (!moved) throw std::logic_error("pipeline schedule deadlocks: a pass waits on one never run");
  }
  double first = std::numeric_limits<double>::infinity(), last = 0;
  for (int r = 0; r < p; ++r) {
    run.end[r] = free_at[r];
    if (!run.start[r].empty()) first = std::min(first, run.start[r].front());
    last = std::max(last, free_at[r]);
  }
  run.span = last - (std::isfinite(first) ? first : 0);
  run.peak_in_flight = peak_in_flight(order);
  return run;
}

}  // namespace ultrasim
