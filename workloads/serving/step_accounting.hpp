// Step accounting: a serving step's time from its segments' (workloads/serving/segment_pricer.hpp). Per
// group of segments (a layer of a stage, or a stage's send and LM head), the compute stream and the
// communication stream add up; with micro-batch overlap (two plans) a layer costs the longer of the two
// streams, the communication taking its share of the chip from the compute beside it
// (ChipModel::overlapped_seconds). Each layer adds its fixed cost once per micro-batch, the step the host's
// overhead. Every second of the step is charged to what bounded it (hbm, compute, link:TIER, latency,
// overhead). A compact plan's segment counts `repeat` times.
#pragma once

#include <vector>

#include "workloads/serving/segment_pricer.hpp"
#include "workloads/serving/segment_time.hpp"
#include "workloads/serving/serving.hpp"

namespace ultrasim {

// One step: one plan, or two micro-batches' (overlap), priced by `pricer` (which records it while tracing).
// SimulationError when the micro-batches' plans differ in shape.
StepTime account_step(SegmentPricer& pricer, const std::vector<StepPlan>& plans);

}  // namespace ultrasim
