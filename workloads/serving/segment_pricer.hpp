// The segment pricer: what each segment of a serving step's plan (workloads/serving/serving.hpp) takes on
// the deployment's machines. Compute on the chip model (the busiest chip); the MoE exchange, the tp
// all-reduce and the pipeline sends simulated alone on their stage's chips, in this process (the
// contention-free engine where it proves exact, else the fast engine, or the engine asked for; a tp
// all-reduce that only SimGrid models, an in-switch reduction, in a child process on SimGrid). Segments
// that are the same simulation (the same all-reduce size; with the uniform router, the same MoE layer)
// are simulated once: the engines are deterministic. With the step-time predictor (use_predictor), an
// MoE segment is priced from it instead (workloads/serving/step_predictor.hpp).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/engines/runner.hpp"
#include "sim/machine/chip_model.hpp"
#include "workloads/collective/collective_job.hpp"
#include "workloads/serving/segment_time.hpp"
#include "workloads/serving/serving.hpp"

namespace ultrasim {

class StepTimePredictor;

class SegmentPricer {
 public:
  // Builds the deployment's fabric (or takes `machine`, a part of a fabric already built: a pool's chips,
  // select_chips(); config.topology then names it) and chip model; InputError for a bad topology, chip
  // profile or layout, and for --engine simgrid (a serving run simulates many segments in one process).
  explicit SegmentPricer(const ServingConfig& config, std::unique_ptr<Machine> machine = nullptr);
  ~SegmentPricer();

  const ServingConfig& config() const { return config_; }  // with the deployment's dtypes on the model
  const ServingLayout& layout() const { return layout_; }
  const ParamSet& params() const { return params_; }
  const ChipModel& chip() const { return *chip_; }
  const ChipProfile& profile() const { return profile_; }
  Machine& full() { return *full_; }
  // The chips of stage s as a machine of their own (the whole fabric's links, its ranks only).
  Machine& stage(int s);

  // The segment alone; `overlap`: its step overlaps two micro-batches (an MoE layer is then its
  // communication, its experts the compute stream's).
  SegmentTime price(const Segment& seg, bool overlap);
  // Before a step: simulates the MoE layers of `plans` not simulated yet, as many at once as there are
  // cores, in child processes (none while tracing, none under the predictor).
  void prefetch(const std::vector<StepPlan>& plans);
  // Moving rows[i][j] bytes from chip i to chip j of the whole fabric, alone (prefill-to-decode KV).
  SegmentTime exchange(const std::vector<std::vector<std::uint64_t>>& rows);
  // --check-engine: the first n exchanges (MoE layers, tp all-reduces) of `plans` on the fast and the
  // exact flow engine.
  EngineCheck check_engine(const std::vector<StepPlan>& plans, int n);

  // From now on, MoE segments from the step-time predictor: each point the mean of `sample_layers` of the
  // stage's MoE layers, spread evenly, simulated as the exact plan would; `cache_dir` shares the points
  // between processes ("" for none).
  void use_predictor(int sample_layers, const std::string& cache_dir);
  std::size_t predicted_points() const;  // points the predictor simulated

  // The least exact engine any segment ran on (fast, then SimGrid, flow, contention-free), so that a
  // result that used the fast engine anywhere says so.
  Engine engine_used() const { return used_; }

  // Tracing: the next step's segments recorded into one run of the whole fabric (trace_next_step), the
  // step accounting placing each at `at` (record) and the fixed costs beside them (record_fixed).
  void trace_next_step() { tracing_ = std::make_unique<SimResult>(); }
  bool tracing() const { return tracing_ != nullptr; }
  SimResult& trace() { return *tracing_; }
  std::unique_ptr<SimResult> take_trace() { return std::move(tracing_); }
  void record(const Segment& seg, const SegmentTime& t, double at);

 private:
  SegmentTime compute(const Segment& seg) const;
  SegmentTime allreduce(const Segment& seg);
  SegmentTime allreduce_on_simgrid(const Segment& seg, const PreparedJob& prepared);
  SegmentTime moe(const Segment& seg, bool overlap);
  void prefetch_moe(const std::vector<StepPlan>& plans);  // prefetch's work, whatever prices MoE layers
  SegmentTime send(const Segment& seg);
  SegmentTime alone(const Machine& m, Program& program);  // a transfer-only program's time alone
  SimResult simulate_here(const Machine& m, Program& program);
  CollectiveJob tp_job(const Segment& seg);
  std::string moe_key(const Segment& seg, bool overlap) const;
  SegmentTime decode(const std::vector<double>& v);
  SegmentTime predictor_point(int stage, std::uint64_t m, std::uint64_t T);
  std::string predictor_description(int sample_layers) const;
  void note_engine(Engine e);

  ServingConfig config_;
  Engine engine_;
  const ChipProfile profile_;
  std::vector<std::pair<std::string, std::string>> topology_overrides_;
  std::vector<std::string> chip_names_;
  std::unique_ptr<Machine> full_;
  std::vector<std::unique_ptr<Machine>> stages_;
  ParamSet params_;
  std::unique_ptr<ChipModel> chip_;
  ServingLayout layout_;
  std::map<std::pair<int, std::uint64_t>, SegmentTime> allreduce_cache_;
  std::map<std::string, SegmentTime> moe_cache_;
  int sample_layers_ = 0;  // the predictor's MoE layers per point
  std::unique_ptr<StepTimePredictor> predictor_;
  Engine used_ = Engine::kContentionFree;
  std::unique_ptr<SimResult> tracing_;
};

}  // namespace ultrasim
