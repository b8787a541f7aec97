// What pricing one segment of a serving step gives (workloads/serving/segment_pricer.hpp), and what a
// step adds up from them (workloads/serving/step_accounting.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/engines/records.hpp"

namespace ultrasim {

// One segment simulated (or computed) alone.
struct SegmentTime {
  double seconds = 0;    // alone
  double compute_s = 0;  // of which compute (an MoE layer's slowest expert compute)
  double fixed_s = 0;    // of the compute, the kernels' fixed costs
  double comm_s = 0;     // of which communication
  std::string bound = "compute", comm_bound = "latency";  // compute: hbm | compute; comm: link:TIER | latency
  double flops = 0, bytes = 0, link_bytes = 0;            // over every chip
  std::uint64_t transfers = 0, wrong = 0;
  std::string first_error;
  Engine engine = Engine::kContentionFree;
  unsigned tabled = 0, fell_back = 0;    // kernel classes priced from the chip's tables / by its roofline
  std::shared_ptr<const SimResult> run;  // while tracing: the simulation's records (stage ranks)
};

// A step's time and what it was spent on.
struct StepTime {
  double seconds = 0;
  std::map<std::string, double> bound_s;  // seconds of the step per bounding resource
  std::map<std::string, double> parts_s;  // seconds per kind of segment (each alone)
  std::vector<double> moe_s;              // each MoE layer alone (micro-batch 0's)
  std::uint64_t tp_bytes = 0;             // the tp all-reduces: their size, one's time alone, how many
  double tp_s = 0;
  int tp_count = 0;
  double flops = 0, bytes = 0, link_bytes = 0;
  std::uint64_t transfers = 0, wrong = 0;
  std::string first_error;
  unsigned tabled = 0, fell_back = 0;  // kernel classes priced from the chip's tables / by its roofline
  double attention_balance = 1;        // the plans' (StepPlan::attention_balance; micro-batches: the least)
};

// A segment's time as numbers (a child process's answer, a point of the step-time model's cache) and
// back; the bound tier as its index in `tiers` (the topology's), -1 for latency. Every field but the fixed
// cost, the first error's text and the records travels; decode_segment throws SimulationError for numbers
// that are no such answer (segment_values_problem says why).
std::vector<double> encode_segment(const SegmentTime& t, const std::vector<std::string>& tiers);
SegmentTime decode_segment(const std::vector<double>& v, const std::vector<std::string>& tiers);
// What is wrong with `v` as encode_segment's numbers ("" if nothing): their count, a number not finite,
// negative or not whole where it must be, a tier or engine out of range.
std::string segment_values_problem(const std::vector<double>& v, const std::vector<std::string>& tiers);

}  // namespace ultrasim
