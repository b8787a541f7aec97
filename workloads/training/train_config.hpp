// `ultrasim train` ("workload": "train"): a training step of a model from the model table (the one serving
// uses) in Megatron-LM's vocabulary: tensor (with sequence parallelism), context, pipeline (a schedule,
// virtual stages), data (ZeRO 0-3: 1 is Megatron's distributed optimizer, 3 FSDP) and expert parallelism,
// micro and global batch, sequence length, precision, activation recompute and the overlap switches.
// The options are one table (train_options()): the flags of `ultrasim train`, the fields of a workload file,
// `ultrasim list options` and the reference.
//
// Ranks (Megatron-LM's order, tensor innermost): rank = t + tp (c + cp (d + dp s)) for tensor rank t,
// context rank c, data rank d and pipeline stage s; dp = chips / (tp cp pp). The MoE layers lay the same
// tp cp dp ranks of a stage out again (Megatron-Core's expert grid), q = t + tp (c + cp d) =
// et + etp (e + ep b): expert tensor rank et (experts split etp ways), expert rank e (the experts split
// ep ways: an all-to-all group) and expert-data rank b (edp = tp cp dp / (etp ep): the expert weights'
// gradient group).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "topology/base/options.hpp"
#include "workloads/serving/model.hpp"

namespace ultrasim {

struct TrainConfig {
  std::string topology = "trn3";
  ModelShape model;
  std::string chip = "auto";  // a chip profile (ultrasim list chips), or a FILE.json
  int tp = 1, cp = 1, pp = 1, ep = 1, etp = 1, vp = 1;
  std::string schedule = "1f1b";
  int micro_batch = 1, global_batch = 0;  // sequences; global 0: dp x micro x 4 pp (assumption)
  int seq_len = 4096;
  std::string precision = "bf16";  // bf16 | fp8 | mxfp8 | fp4: the GEMMs' inputs
  std::string recompute = "none";  // none | selective | full
  int zero = 1;                    // 0 all-reduce; 1 distributed optimizer; 2 + gradients; 3 + weights
  bool sequence_parallel = true;
  bool overlap_grad_reduce = true, overlap_param_gather = true, tp_comm_overlap = false, ep_overlap = false;
  std::string grad_reduce_dtype = "float32";  // Megatron-LM's main gradients
  std::string dp_algorithm = "auto", tp_algorithm = "ring";
  std::string router = "uniform";  // the experts' routing: uniform (the expected split) | random
  std::optional<double> zipf;      // the experts' popularity (Zipf s); nullopt: the model's expert_zipf
  std::uint64_t seed = 0;          // the random router's
  double train_tokens = 1e12;      // for the time, energy and cost to train
  std::string engine = "auto";
  std::vector<std::pair<std::string, std::string>> overrides;  // --set

  int dp(int chips) const { return chips / (tp * cp * pp); }
  // Micro-batches per step per pipeline: global / (micro x dp).
  int micro_batches(int chips) const { return global_batch / (micro_batch * dp(chips)); }
  int rank(int t, int c, int d, int s, int chips) const { return t + tp * (c + cp * (d + dp(chips) * s)); }
  // The expert-data-parallel size: a stage's ranks / (etp ep).
  int edp(int chips) const { return tp * cp * dp(chips) / (etp * ep); }
};

const OptionTable<TrainConfig>& train_options();

// The most forward passes a step's pipeline plays (micro-batches x pp x vp): about 100 MiB of schedule.
inline constexpr double kMaxPipelinePasses = 1 << 22;

// Checks what needs only the chip count: the layout divides the chips, the batch divides into
// micro-batches, layers into stages, the schedule takes the micro-batches; InputError naming the option.
// Fills global_batch's default. Refuses a step of more than kMaxPipelinePasses passes.
void check_train_layout(TrainConfig& c, int chips);

}  // namespace ultrasim
