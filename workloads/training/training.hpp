// A training step as a workload: stages run in order on every chip; a stage holds some compute (seconds,
// or FLOPs at chip_flops x compute_efficiency), collectives on named groups of chips and point-to-point
// sends along a group (pipeline stages). Within a stage a chip first runs its communication (the stage's
// collectives in order, then its send to the next chip of its p2p group) and then computes whatever of
// its compute time the communication did not already cover: the stage ends on a chip at
// start + max(communication, compute), i.e. communication overlaps compute (a gradient all-reduce bucket
// put in the stage of the next backward compute starts when the previous backward ended, as in DDP).
// There is no barrier between stages: each chip moves on when its own part is done; collectives
// synchronise the chips they involve.
//
// Workload file (workloads/README.md): {"workload": "training", "topology", "layout", "iterations",
// "tokens_per_step", "model_flops", "stages": [{"name", "compute_s" | "compute_flops", "collectives":
// [{"collective", "algorithm", "size", "groups"}], "p2p": {"groups", "size"}}], "set"}.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/algorithm.hpp"
#include "collectives/groups.hpp"
#include "sim/machine/program.hpp"
#include "topology/topology.hpp"

namespace ultrasim {

struct StageCollective {
  std::string collective, algorithm = "ring", groups;  // groups: a --groups spec (with the layout)
  std::uint64_t bytes = 0;
};

struct TrainingStage {
  std::string name;
  double compute_s = 0;      // per chip
  double compute_flops = 0;  // per chip (converted with chip_flops x compute_efficiency)
  std::vector<StageCollective> collectives;
  std::optional<StageCollective> p2p;  // groups and bytes: each chip sends `bytes` to the next of its group
};

struct TrainingConfig {
  std::string topology = "trn3", layout;
  int iterations = 1;
  std::optional<double> tokens_per_step;  // for tokens/s and cost per million tokens
  std::optional<double> model_flops;      // per step, for MFU (default: every stage's FLOPs x chips)
  std::vector<TrainingStage> stages;
  std::vector<std::pair<std::string, std::string>> overrides;  // "set"
};

// Throws InputError naming the field and what it expects.
TrainingConfig training_config_from_json(const nlohmann::json& workload, const std::string& file);

// What every chip ran, for the runner to check and report: per stage its start and end on each chip,
// and per collective (stage, index) the chips' final slots.
struct TrainingRecord {
  std::vector<std::vector<double>> stage_start, stage_end;     // [stage][chip], s
  std::vector<std::vector<std::vector<Contribution>>> finals;  // [collective][chip]
};

// One collective of a stage, resolved on the topology.
struct ResolvedCollective {
  int stage = 0;
  const CollectiveInfo* info = nullptr;
  std::unique_ptr<Algorithm> algorithm;
  Groups groups;
  std::uint64_t bytes = 0;
  bool p2p = false;  // a send to the next chip of each group, not a collective
};

// The step as the program its chips run (sim/machine/program.hpp): every iteration runs the stages in order
// (see above). Collective k of the run labels its messages from k x 2^20 on. The verdict: every group of
// every collective holds what its collective promises (the first error names the stage).
class TrainingStep : public Program {
 public:
  TrainingStep(const TrainingConfig& config, const Topology& topology, const ParamSet& params);
  void run(Transport& transport) override;
  Verdict verdict() const override;
  // Each chip's stages back to back: compute or the collectives' model_s, whichever is longer, summed
  // (`in`: the machine's α and β, every chip).
  double model_s(const CostInput& in) const;
  const std::vector<ResolvedCollective>& collectives() const { return collectives_; }
  const TrainingRecord& record() const { return record_; }
  double stage_compute_s(int stage) const { return compute_s_.at(stage); }
  // One iteration's compute on a chip (every chip computes every stage's): the stages' sum.
  double compute_s() const;

 private:
  TrainingConfig config_;
  std::vector<double> compute_s_;  // per stage: each chip's compute, s
  std::vector<ResolvedCollective> collectives_;
  std::vector<std::vector<int>> stage_collectives_;  // stage -> its collectives (indices)
  TrainingRecord record_;
  int chips_ = 0;
  std::optional<double> reduce_rate_;  // reduce_bandwidth of the run
};

}  // namespace ultrasim
