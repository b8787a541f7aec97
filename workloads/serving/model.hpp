// A transformer's shape, as serving needs it: per layer the attention (MHA, GQA or MLA: its weights, the
// KV-cache bytes it keeps per token, the FLOPs of its scores) and the feed-forward part (a dense gated FFN
// or an MoE of routed and shared experts), the vocabulary and the dtypes. The built-in shapes are one
// registry table (model_shapes(), with their sources; `ultrasim list models`); a workload file may give
// its own as an object with the same fields (workloads/serving/README.md).
//
// Weights, per layer (H hidden, n heads, g KV heads, d head dim; gated FFNs have three H x F matrices):
//   MHA / GQA  H d (2 n + 2 g)                              (q, k, v, o)
//   MLA        H q_r + q_r n (d_nope + d_rope) + H (kv_r + d_rope) + kv_r n (d_nope + d_v) + n d_v H
//              (q_r = 0: H n (d_nope + d_rope) for an unfactored q)
//   dense FFN  3 H F;   an expert 3 H F_e;   the router H E
// KV cache per token and layer: MHA / GQA 2 g d x kv bytes; MLA (kv_r + d_rope) x kv bytes (the latent).
// Score FLOPs per token attending c tokens (2 per multiply-add):
//   MHA / GQA  4 n d c
//   MLA        decode (weights absorbed, scores on the latent): 2 n (kv_r + d_rope) c + 2 n kv_r c
//              prefill (the latent expanded):                 2 n (d_nope + d_rope) c + 2 n d_v c
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ultrasim {

struct ModelShape {
  std::string name, description, source;
  int layers = 0;        // transformer blocks
  int dense_layers = 0;  // the first dense_layers have a dense FFN; the others are MoE (if experts > 0)
  std::uint64_t hidden = 0, vocab = 0;
  std::string attention = "gqa";  // mha | gqa | mla
  int heads = 0, kv_heads = 0;    // MLA: kv_heads unused
  std::uint64_t head_dim = 0;     // MHA / GQA
  std::uint64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  std::uint64_t ffn = 0;  // dense layers' intermediate size
  int experts = 0, shared_experts = 0, top_k = 0;
  std::uint64_t expert_ffn = 0;
  bool tied_embeddings = false;
  std::string weight_dtype = "float8", kv_dtype = "bfloat16", activation_dtype = "bfloat16";
  double expert_zipf = 0;       // the experts' popularity (Zipf exponent) unless the run says otherwise
  double published_params = 0;  // as published, for the check of the shape (0: none)

  bool moe() const { return experts > 0; }
  bool is_moe_layer(int layer) const { return moe() && layer >= dense_layers; }
  int moe_layers() const { return moe() ? layers - dense_layers : 0; }
  double attention_params() const;  // per layer
  // The attention's GEMMs as (n, k) pairs, their n k adding up to attention_params(): MHA / GQA the fused
  // qkv ((n + 2 g) d, H) and o (H, n d); MLA the fused down-projections q_a and kv_a (q_r + kv_r + d_rope,
  // H) (q_r = 0: q (n (d_nope + d_rope), H) and kv_a (kv_r + d_rope, H)), q_b (n (d_nope + d_rope), q_r),
  // kv_b (n (d_nope + d_v), kv_r) and o (H, n d_v).
  std::vector<std::pair<double, double>> attention_gemms() const;
  double dense_ffn_params() const { return 3.0 * static_cast<double>(hidden) * static_cast<double>(ffn); }
  double expert_params() const { return 3.0 * static_cast<double>(hidden) * static_cast<double>(expert_ffn); }
  double router_params() const { return static_cast<double>(hidden) * experts; }
  double embedding_params() const { return static_cast<double>(vocab) * static_cast<double>(hidden); }
  // Every weight: the layers, the embedding and (untied) the LM head.
  double total_params() const;
  // The weights a token runs through: attention, the dense FFN or top-k + shared experts, LM head.
  double active_params() const;
  double kv_bytes_per_token() const;  // per layer
  // The ways tp chips split the KV cache: MHA / GQA min(tp, kv_heads); MLA none (each keeps the latent).
  int kv_split(int tp) const { return attention == "mla" ? 1 : (tp < kv_heads ? tp : kv_heads); }
  // FLOPs of one token's attention scores over `context` tokens, per layer (decode: MLA absorbed).
  double score_flops(double context, bool decode) const;
  // Throws InputError naming `where` and the field for a shape that cannot be (a zero size, top_k > E).
  void validate(const std::string& where) const;
};

// The built-in shapes (the registry `list models` shows).
const std::vector<ModelShape>& model_shapes();
// A built-in by name ("did you mean" otherwise), or a shape given as a JSON object; InputError naming
// `where`.
ModelShape model_from_json(const nlohmann::json& model, const std::string& where);
// The shape as a JSON object (the fields model_from_json reads, and the derived counts).
nlohmann::ordered_json model_json(const ModelShape& model);

}  // namespace ultrasim
