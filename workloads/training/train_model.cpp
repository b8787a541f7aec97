#include "workloads/training/train_model.hpp"

#include <algorithm>

#include "workloads/moe/moe.hpp"

namespace ultrasim {

std::string precision_dtype(const std::string& precision) {
  if (precision == "bf16") return "bfloat16";
  if (precision == "fp4") return "mxfp4";
  return "float8";  // fp8, mxfp8: 8-bit inputs at the 8-bit peak
}

namespace {

double tokens_per_micro(const TrainConfig& c) {
  return static_cast<double>(c.micro_batch) * c.seq_len / c.cp;
}

// Per token, the weights of a layer's parts a token runs through (not split by tp).
struct LayerWeights {
  double attention = 0, dense = 0, routed = 0, shared = 0, router = 0;
};
LayerWeights layer_weights(const ModelShape& m, int layer) {
  LayerWeights w;
  w.attention = m.attention_params();
  if (m.is_moe_layer(layer)) {
    w.routed = m.top_k * m.expert_params();
    w.shared = m.shared_experts * m.expert_params();
    w.router = m.router_params();
  } else {
    w.dense = m.dense_ffn_params();
  }
  return w;
}

}  // namespace

std::vector<int> chunk_layers(int layers, int chunks) {
  std::vector<int> out(chunks, layers / chunks);
  for (int j = 0; j < layers % chunks; ++j) ++out[j];
  return out;
}

double elementwise_bytes_per_token(const TrainConfig& c, int layer) {
  const ModelShape& m = c.model;
  const double H = static_cast<double>(m.hidden), tp = c.tp;
  const double sp = c.sequence_parallel ? tp : 1.0;  // norms and residuals on T / tp tokens
  const double heads_dim = m.attention == "mla" ? m.heads * static_cast<double>(m.qk_rope_head_dim)
                                                : (m.heads + m.kv_heads) * static_cast<double>(m.head_dim);
  double elements = 10 * H / sp + 2 * heads_dim / tp;  // 2 norms (2H), 2 residual adds (3H), rotary
  double ffn_inputs = H;
  if (m.is_moe_layer(layer)) {
    const double F = static_cast<double>(m.expert_ffn);
    elements += 3 * F * (m.top_k + m.shared_experts) / tp + 4 * H * m.top_k;  // SwiGLU, permute, unpermute
    ffn_inputs = H * (1 + m.top_k) + F * (m.top_k + m.shared_experts) / tp;
  } else {
    elements += 3 * static_cast<double>(m.ffn) / tp;
    ffn_inputs = H + static_cast<double>(m.ffn) / tp;
  }
  if (c.precision != "bf16")
    elements += 1.5 * (H + heads_dim / tp + ffn_inputs);  // casts: bf16 in, 8 bit out
  return 2 * elements;                                    // bf16 elements
}

double activation_bytes_per_token(const TrainConfig& c, int layer) {
  const ModelShape& m = c.model;
  const double H = static_cast<double>(m.hidden), tp = c.tp, sp = c.sequence_parallel ? tp : 1.0;
  if (c.recompute == "full") return 2 * H / sp;     // the layer's input only
  const double in = c.precision == "bf16" ? 2 : 1;  // a GEMM's saved input: its 8-bit cast under fp8
  double qkv = 0, out = 0;
  if (m.attention == "mla") {
    qkv = m.heads * static_cast<double>(2 * (m.qk_nope_head_dim + m.qk_rope_head_dim) + m.v_head_dim);
    out = m.heads * static_cast<double>(m.v_head_dim);
  } else {
    qkv = (m.heads + 2.0 * m.kv_heads) * static_cast<double>(m.head_dim);
    out = m.heads * static_cast<double>(m.head_dim);
  }
  // The norms' inputs (bf16) and the GEMMs' inputs, sharded tp-way by sequence parallelism (re-gathered in
  // the backward); q, k, v for the attention core's backward (selective recompute: recomputed); the core's
  // output.
  double bytes = 2 * (2 * H / sp) + in * H / sp + in * out / tp;
  if (c.recompute != "selective") bytes += 2 * qkv / tp;
  const bool moe = m.is_moe_layer(layer);
  const double F = moe ? static_cast<double>(m.expert_ffn) : static_cast<double>(m.ffn);
  const double copies = moe ? m.top_k + m.shared_experts : 1;  // a token's FFN copies
  bytes += in * H * (moe ? copies / tp : 1 / sp);              // the FFN's input (an MoE: each permuted copy)
  bytes += copies * (2 * 2 * F + in * F) / tp;                 // gate and up (bf16), the activation's output
  return bytes;
}

ExpertSkew expert_skew(const TrainConfig& c) {
  const ModelShape& m = c.model;
  const double zipf = c.zipf.value_or(m.expert_zipf);
  if (!m.moe() || c.ep < 2 || (c.router == "uniform" && zipf == 0)) return {};
  MoeConfig moe;
  moe.experts = m.experts, moe.top_k = m.top_k, moe.hidden = m.hidden, moe.ffn = m.expert_ffn;
  moe.tokens_per_chip = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(tokens_per_micro(c) / c.tp));
  moe.router = c.router, moe.zipf = zipf, moe.seed = c.seed, moe.dedup = false;
  const MoeRouting r = route_tokens(moe, c.ep, 0);
  double copies = 0, busiest = 0, exchanged = 0, most = 0;
  for (int chip = 0; chip < c.ep; ++chip) {
    copies += static_cast<double>(r.copies_on(chip));
    busiest = std::max(busiest, static_cast<double>(r.copies_on(chip)));
    double sent = 0, received = 0;
    for (int other = 0; other < c.ep; ++other)
      if (other != chip)
        sent += static_cast<double>(r.dispatch_tokens[chip][other]),
            received += static_cast<double>(r.dispatch_tokens[other][chip]);
    exchanged += sent;
    most = std::max({most, sent, received});
  }
  ExpertSkew skew;
  skew.compute = copies > 0 ? busiest / (copies / c.ep) : 1;
  skew.exchange = exchanged > 0 ? most / (exchanged / c.ep) : 1;
  return skew;
}

LayerCompute layer_compute(const TrainConfig& c, const ChipModel& chip, int layer, double skew) {
  const ModelShape& m = c.model;
  const double T = tokens_per_micro(c), tp = c.tp;
  const std::string dtype = precision_dtype(c.precision);
  LayerCompute out;
  if (layer < 0) {  // the LM head and its cross-entropy (fp32 logits read and written three times)
    ChipWork head;
    head.gemm_flops = 2 * T * static_cast<double>(m.vocab * m.hidden) / tp, head.rows = T;
    head.gemm_dtype = "bfloat16";
    head.bytes =
        static_cast<double>(m.vocab * m.hidden) / tp * 2 + 12 * T * static_cast<double>(m.vocab) / tp;
    head.kernels = 4;
    const double f = chip.time(head).seconds() / chip.training_efficiency();
    out.forward_s = f;
    out.backward_s = 2 * f;
    out.model_flops = out.hardware_flops = 3 * head.gemm_flops;
    return out;
  }
  const LayerWeights w = layer_weights(m, layer);
  // The GEMMs at their rows: the attention's, dense FFN's, shared experts' and router's at T, the routed
  // experts' at the tokens each expert gets, T ep top_k / E.
  ChipWork dense;
  dense.gemm_flops = 2 * T * (w.attention + w.dense + w.shared) / tp + 2 * T * w.router, dense.rows = T;
  dense.gemm_dtype = dtype;
  dense.bytes = 2 * (w.attention + w.dense + w.shared) / tp;
  // The routed experts: each chip takes its ep share of the experts, etp ways split, for the tokens its
  // expert group brings (T / tp each, sequence parallel): 2 T top_k W_e / tp FLOPs whatever the grid.
  ChipWork experts;
  experts.gemm_flops = 2 * T * w.routed / tp;
  experts.rows = m.moe() ? T * c.ep * m.top_k * c.etp / (m.experts * tp) : 0;
  experts.gemm_dtype = dtype;
  experts.bytes = 2 * static_cast<double>(m.experts) / c.ep * m.expert_params() / c.etp * (w.routed > 0);
  ChipWork attention;
  attention.attention_flops = T * m.score_flops(0.5 * c.seq_len, false) / tp;
  attention.decode = false;
  ChipWork other;
  other.bytes = T * elementwise_bytes_per_token(c, layer);
  other.kernels = kKernelsPerLayer;
  const double train = chip.training_efficiency();  // training's kernels, of the profile's rates
  const double gemm_s =
      (chip.time(dense).seconds() + (experts.gemm_flops > 0 ? skew * chip.time(experts).seconds() : 0)) /
      train;
  const double attention_s = chip.time(attention).seconds() / train;
  const double other_s = chip.time(other).seconds() + chip.layer_overhead();
  out.forward_s = gemm_s + attention_s + other_s;
  out.attention_s = attention_s;
  out.backward_s = 2 * gemm_s + 2.5 * attention_s + 2 * other_s;
  const double fwd_flops = dense.gemm_flops + experts.gemm_flops + attention.attention_flops;
  out.model_flops = 3 * dense.gemm_flops + 3 * experts.gemm_flops + 3.5 * attention.attention_flops;
  out.hardware_flops = out.model_flops;
  if (c.recompute == "full") {
    out.backward_s += out.forward_s;
    out.hardware_flops += fwd_flops;
  } else if (c.recompute == "selective") {
    out.backward_s += attention_s;
    out.hardware_flops += attention.attention_flops;
  }
  return out;
}

double model_flops_per_token(const TrainConfig& c) {
  const ModelShape& m = c.model;
  double flops = 6.0 * static_cast<double>(m.vocab * m.hidden);  // the LM head
  for (int l = 0; l < m.layers; ++l) {
    const LayerWeights w = layer_weights(m, l);
    flops += 6 * (w.attention + w.dense + w.routed + w.shared + w.router) +
             3.5 * m.score_flops(0.5 * c.seq_len, false);
  }
  return flops;
}

StageWeights chunk_params(const TrainConfig& c, const std::vector<int>& layers_of_chunk, int j) {
  const ModelShape& m = c.model;
  StageWeights w;
  int first = 0;
  for (int k = 0; k < j; ++k) first += layers_of_chunk[k];
  for (int l = first; l < first + layers_of_chunk[j]; ++l) {
    const LayerWeights lw = layer_weights(m, l);
    w.dense += (lw.attention + lw.dense + lw.shared) / c.tp + lw.router;
    if (m.is_moe_layer(l)) w.expert += m.experts * m.expert_params() / (c.ep * c.etp);
  }
  const double embedding = m.embedding_params() / c.tp;
  if (j == 0) w.dense += embedding;
  if (j + 1 == static_cast<int>(layers_of_chunk.size()) && !m.tied_embeddings)
    w.dense += embedding;  // LM head
  return w;
}

StageWeights stage_params(const TrainConfig& c, const std::vector<int>& layers_of_chunk, int stage) {
  StageWeights w;
  for (int j = stage; j < static_cast<int>(layers_of_chunk.size()); j += c.pp) {
    const StageWeights chunk = chunk_params(c, layers_of_chunk, j);
    w.dense += chunk.dense, w.expert += chunk.expert;
  }
  return w;
}

TrainMemory stage_memory(const TrainConfig& c, const std::vector<int>& layers_of_chunk, int stage,
                         int in_flight_chunks, int chips) {
  const StageWeights w = stage_params(c, layers_of_chunk, stage);
  const double dp = static_cast<double>(c.dp(chips)) * c.cp, edp = c.edp(chips);
  auto shard = [&](int from_stage, double dense, double expert) {
    return c.zero >= from_stage ? dense / dp + expert / edp : dense + expert;
  };
  TrainMemory mem;
  mem.weights = shard(3, w.dense, w.expert) * 2;  // bf16 (fp8 casts are made per micro-batch, not kept)
  mem.gradients = shard(2, w.dense, w.expert) * 4;
  mem.optimizer = shard(1, w.dense, w.expert) * 12;
  // Activations: the peak of (micro-batch, chunk) passes held, each with its chunk's layers (the largest).
  const double T = tokens_per_micro(c);
  double per_chunk = 0;
  int first = 0;
  for (std::size_t j = 0; j < layers_of_chunk.size(); ++j) {
    double bytes = 0;
    for (int l = first; l < first + layers_of_chunk[j]; ++l) bytes += T * activation_bytes_per_token(c, l);
    if (static_cast<int>(j) % c.pp == stage) per_chunk = std::max(per_chunk, bytes);
    first += layers_of_chunk[j];
  }
  mem.activations = per_chunk * in_flight_chunks;
  if (stage == (static_cast<int>(layers_of_chunk.size()) - 1) % c.pp)
    mem.logits = 4 * T * static_cast<double>(c.model.vocab) / c.tp;
  return mem;
}

double optimizer_seconds(const TrainConfig& c, const ChipModel& chip, const StageWeights& params, int chips) {
  const double dp = static_cast<double>(c.dp(chips)) * c.cp;
  const double owned =
      c.zero >= 1 ? params.dense / dp + params.expert / c.edp(chips) : params.dense + params.expert;
  ChipWork adam;
  adam.bytes = 30 * owned;
  adam.kernels = 4;
  return chip.time(adam).seconds();
}

}  // namespace ultrasim
