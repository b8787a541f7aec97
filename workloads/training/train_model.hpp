// What a training step asks of each chip, free of the fabric: the compute of one micro-batch through one
// layer, forward and backward, priced on the chip model (sim/machine/chip_model.hpp: the chip profile of the
// topology, the same as serving's), the communication each layer and step moves, the optimizer step and
// the memory each chip holds. Per chip, for a micro-batch of b sequences of s tokens (T = b s / cp tokens
// through the chip's GEMMs, whose weights are split tp ways):
//   GEMMs     forward 2 T W / tp FLOPs (W: the layer's weights a token runs through; an MoE layer's routed
//             experts top_k x 3 H F_e at rows T ep top_k / E, its shared experts and router besides);
//             backward twice that (the input's and the weights' gradients)
//   attention forward: T x score FLOPs over s / 2 tokens (causal) / tp; backward 2.5 x (FlashAttention:
//             five GEMMs to two)
//   recompute full: the backward runs the forward again; selective: the attention core again
//   other     element-wise kernels (norms, residuals, rotary, SwiGLU, casts to fp8, the MoE's permutes) as
//             HBM traffic (elementwise_bytes_per_token), kernels_per_layer launches, layer_overhead per pass
//   last stage the LM head 2 T V H / tp and its cross-entropy; the first the embedding's read
// Memory per chip: weights (2 bytes), fp32 gradients (4 B), Adam's fp32 master and
// moments (12 B), sharded over the data-parallel group by ZeRO stage (1: optimizer; 2: + gradients;
// 3: + weights; experts' over their expert-data-parallel group); activations per layer and micro-batch
// held (activation_bytes_per_token) times the schedule's peak of micro-batches in flight; the logits; and
// kBufferBytes of buffers (assumption).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/machine/chip_model.hpp"
#include "workloads/training/train_config.hpp"

namespace ultrasim {

// Buffers per chip beyond the tensors: communication buffers, workspaces, the allocator's slack.
inline constexpr double kBufferBytes = 3.0 * (1ull << 30);  // assumption: 3 GiB
inline constexpr int kKernelsPerLayer = 14;  // assumption: forward launches of a fused transformer layer

// One micro-batch through one layer on one chip: seconds and FLOPs (model: without recompute; hardware:
// with).
struct LayerCompute {
  double forward_s = 0, backward_s = 0;
  double attention_s = 0;  // of forward_s: the attention core (context parallelism overlaps it)
  double model_flops = 0, hardware_flops = 0;  // forward + backward
};

// How much more the busiest expert rank of a micro-batch's routing does than the mean: its experts' token
// copies (compute) and the tokens it sends or receives (exchange), over an expert group of ep ranks holding
// E / ep experts each (contiguous), routed as `moe` routes (workloads/moe/moe.hpp: router, Zipf popularity,
// seed; one copy per expert). 1 and 1 for a dense model, and for the uniform router at zipf 0.
struct ExpertSkew {
  double compute = 1, exchange = 1;
};
ExpertSkew expert_skew(const TrainConfig& c);

// The chip's compute for layer `layer` (its index in the model), or for the LM head with layer = -1; the
// routed experts' at the busiest rank's load (`skew`).
LayerCompute layer_compute(const TrainConfig& c, const ChipModel& chip, int layer, double skew = 1);
// The GEMMs' input element of a --precision: bfloat16, float8 (fp8, mxfp8: the 8-bit peak) or mxfp4.
std::string precision_dtype(const std::string& precision);
// Model FLOPs per token, whole model, forward and backward (6 x active weights + 3 x score FLOPs): MFU's.
double model_flops_per_token(const TrainConfig& c);

// Element-wise HBM traffic per token of a layer's forward pass on one chip (bytes).
double elementwise_bytes_per_token(const TrainConfig& c, int layer);
// Activations a layer keeps per token of a micro-batch until its backward, on one chip (bytes).
double activation_bytes_per_token(const TrainConfig& c, int layer);

// The layers of each model chunk (p v chunks; the first layers % (p v) chunks hold one more).
std::vector<int> chunk_layers(int layers, int chunks);

// Weights one chip holds: dense (attention, dense FFNs, shared experts, router, embedding, LM head) and
// expert weights; of model chunk j (the embedding with chunk 0, the LM head with the last), and of pipeline
// rank `stage` (its chunks j = stage, stage + pp, ...).
struct StageWeights {
  double dense = 0, expert = 0;
};
StageWeights chunk_params(const TrainConfig& c, const std::vector<int>& layers_of_chunk, int j);
StageWeights stage_params(const TrainConfig& c, const std::vector<int>& layers_of_chunk, int stage);

struct TrainMemory {
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, logits = 0, buffers = kBufferBytes;
  double total() const { return weights + gradients + optimizer + activations + logits + buffers; }
};
// Chip memory of pipeline rank `stage` holding `in_flight` (micro-batch, chunk) activations at its peak.
TrainMemory stage_memory(const TrainConfig& c, const std::vector<int>& layers_of_chunk, int stage,
                         int in_flight_chunks, int chips);

// Adam's step on one chip: 30 bytes per weight it owns (fp32 master, moments read and written, the
// gradient read, the bf16 weight written), HBM-bound.
double optimizer_seconds(const TrainConfig& c, const ChipModel& chip, const StageWeights& params, int chips);

}  // namespace ultrasim
