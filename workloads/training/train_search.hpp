// `ultrasim train --search`: the best parallel layout of a model on a topology, as `plan` answers for
// serving. The candidates: tp a power of two up to the heads and 8 (NVIDIA's scale-up servers; on
// Trainium the UltraServer is the domain: up to 16), pp a divisor of the chips up to the layers (1f1b,
// and interleaved with 2 virtual stages where the micro-batches allow), for MoE models ep a power of two
// dividing the experts and a stage's ranks (etp 1), cp 1, ZeRO 1, the micro-batch and global batch and
// everything else as given; per layout the recompute policy is the least that fits the chip's memory
// (none, then selective, then full). Every candidate is a full `train` step; the fastest in tokens per
// second per chip wins; the others are ranked below it, each with why it lost or was refused.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "workloads/training/train_run.hpp"

namespace ultrasim {

// {"best": the winner's result, "candidates": [{"layout", "tokens_per_s_per_chip", "mfu", "recompute",
// "refused"}], "command"}; InputError when no candidate fits.
nlohmann::ordered_json search_train_layouts(const TrainRequest& request);
std::string train_search_table(const nlohmann::ordered_json& result);

}  // namespace ultrasim
