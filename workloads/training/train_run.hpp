// `ultrasim train`: a training step built from train_config.hpp's words, priced and played out.
//   compute   each layer's forward and backward on the chip model (train_model.hpp)
//   fabric    every collective of the step on its groups as NCCL runs them (tp, cp, ep all-to-all, dp:
//             hierarchical where a group spans scale-up domains, pipeline sends), simulated on the engine
//             asked for, all groups of a kind at once (their flows contend), each distinct collective once
//             (the engines are deterministic: a repeat is the same simulation)
//   schedule  the pipeline ranks play their schedule's order (pipeline_schedule.hpp) with those times:
//             each pass its layers' compute plus the tp / ep / cp communication it does not overlap;
//             then each rank's gradient reduction (what the last backward does not cover), its optimizer
//             step and the weights' all-gather (what the first forward does not cover)
// The step is the slowest rank's. Every data-parallel replica runs the same; the pipeline ranks stand for
// their tp x cp x dp chips.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "workloads/registry.hpp"
#include "workloads/training/train_config.hpp"

namespace ultrasim {

struct TrainRequest {
  TrainConfig config;
  std::string command, trace;  // trace: a Perfetto (Chrome JSON) file of the step, or ""
};

// Throws InputError for a bad configuration or one that does not fit memory (before any simulation).
nlohmann::ordered_json run_train(TrainRequest request);
// Steps of one topology, chip profile and --set in several layouts (train --search): the fabric is built
// once and each step prices its own collectives.
class TrainSession {
 public:
  explicit TrainSession(const TrainConfig& config);
  ~TrainSession();
  int chips() const;
  // run_train of a request whose topology, chip and --set are the session's.
  nlohmann::ordered_json run(TrainRequest request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
std::string train_table(const nlohmann::ordered_json& result);
// A "train" workload file: the fields of train_options(), "set", "description".
TrainConfig train_config_from_json(const nlohmann::json& workload, const std::string& file);
WorkloadKind train_workload();

}  // namespace ultrasim
