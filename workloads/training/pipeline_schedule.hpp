// Pipeline schedules: in what order each pipeline rank runs the forward and backward passes of its
// micro-batches, one registry table (pipeline_schedules(); `ultrasim list schedules`). Free of the fabric:
// the passes' durations and the sends between ranks come in as functions, and run_pipeline() plays the
// orders out: a pass starts when its rank is free and its input has arrived (a forward needs the previous
// model chunk's forward of the same micro-batch, a backward the next chunk's backward, the last chunk's
// backward its own forward), so the bubble is whatever the order and the durations leave idle.
//
// The model is cut into p v chunks of consecutive layers (p ranks, v virtual stages per rank); chunk
// j = c p + r runs on rank r as its virtual stage c (Megatron-LM's interleaved placement; v = 1 for
// gpipe and 1f1b).
//   gpipe        every forward, then every backward (GPipe, Huang et al. 2019)
//   1f1b         p - r - 1 warm-up forwards, then one forward and one backward in turn, then the
//                remaining backwards (PipeDream-Flush; Megatron-LM's default)
//   interleaved  1f1b over virtual micro-batches: rank r warms up with 2 (p - r - 1) + (v - 1) p
//                forwards, micro-batches in groups of p (Narayanan et al. 2021; m a multiple of p)
// With uniform chunks (forward f, backward b) and free sends the idle share of a rank is, exactly:
//   gpipe, 1f1b   (p - 1) / (m + p - 1)        interleaved   (p - 1) / (v m + p - 1)
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ultrasim {

// One pass: forward or backward of micro-batch `micro` through the rank's virtual stage `chunk`.
struct PipePass {
  bool forward = true;
  int micro = 0, chunk = 0;
};

struct PipelineSchedule {
  std::string name, description, source;
  bool virtual_stages = false;  // takes v > 1
  // Checks p ranks, m micro-batches, v virtual stages; InputError naming what does not fit.
  std::function<void(int p, int m, int v)> check;
  // Each rank's passes in order: [rank] -> passes (every (micro, chunk) once forward, once backward).
  std::function<std::vector<std::vector<PipePass>>(int p, int m, int v)> order;
};

const std::vector<PipelineSchedule>& pipeline_schedules();
// By name; InputError with "did you mean" otherwise.
const PipelineSchedule& find_schedule(const std::string& name);

// The durations run_pipeline() plays with: a pass of rank r's virtual stage c, and the send of one
// micro-batch's activations (or gradients) from rank `from` to rank `to` (0 on the same rank).
struct PipelineCosts {
  std::function<double(int rank, int chunk)> forward, backward;
  std::function<double(int from, int to)> send;
};

struct PipelineRun {
  double span = 0;                    // first pass start to last pass end, s
  std::vector<double> busy, end;      // per rank: seconds in passes; its last pass's end
  std::vector<double> last_backward;  // per rank: its last backward pass's duration
  std::vector<double> first_forward;  // per rank: its first forward pass's duration
  std::vector<int> peak_in_flight;    // per rank: most (micro, chunk) forwards held for a backward
  std::vector<std::vector<PipePass>> order;
  std::vector<std::vector<double>> start, finish;  // per rank, per pass of `order`
  // The share of the span a rank idles, averaged over ranks.
  double bubble() const;
};

// Plays `order` (p ranks, m micro-batches, v virtual stages) with `costs`.
PipelineRun run_pipeline(const std::vector<std::vector<PipePass>>& order, int p, int m, int v,
                         const PipelineCosts& costs);

// The most forwards each rank holds before their backwards (activation memory), from the order alone.
std::vector<int> peak_in_flight(const std::vector<std::vector<PipePass>>& order);

}  // namespace ultrasim
