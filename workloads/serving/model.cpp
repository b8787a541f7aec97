#include "workloads/serving/model.hpp"

#include <cmath>

#include "topology/base/errors.hpp"
#include "topology/base/suggest.hpp"
#include "workloads/chip_model.hpp"      // dtype_bytes
#include "workloads/collective_job.hpp"  // dtype_size
#include "workloads/workload_file.hpp"

namespace ultrasim {

double ModelShape::attention_params() const {
  const double H = static_cast<double>(hidden), n = heads;
  if (attention != "mla") return H * static_cast<double>(head_dim) * (2 * n + 2.0 * kv_heads);
  const double nope = static_cast<double>(qk_nope_head_dim), rope = static_cast<double>(qk_rope_head_dim);
  const double v = static_cast<double>(v_head_dim), qr = static_cast<double>(q_lora_rank);
  const double kvr = static_cast<double>(kv_lora_rank);
  const double q = qr > 0 ? H * qr + qr * n * (nope + rope) : H * n * (nope + rope);
  return q + H * (kvr + rope) + kvr * n * (nope + v) + n * v * H;
}

double ModelShape::total_params() const {
  double layer_sum = 0;
  for (int l = 0; l < layers; ++l)
    layer_sum +=
        attention_params() + (is_moe_layer(l) ? (experts + shared_experts) * expert_params() + router_params()
                                              : dense_ffn_params());
  return layer_sum + embedding_params() * (tied_embeddings ? 1 : 2);
}

double ModelShape::active_params() const {
  double layer_sum = 0;
  for (int l = 0; l < layers; ++l)
    layer_sum +=
        attention_params() +
        (is_moe_layer(l) ? (top_k + shared_experts) * expert_params() + router_params() : dense_ffn_params());
  return layer_sum + embedding_params();  // the LM head; the embedding is a lookup
}

double ModelShape::kv_bytes_per_token() const {
  const double bytes = dtype_size(kv_dtype);
  if (attention == "mla") return static_cast<double>(kv_lora_rank + qk_rope_head_dim) * bytes;
  return 2.0 * kv_heads * static_cast<double>(head_dim) * bytes;
}

double ModelShape::score_flops(double context, bool decode) const {
  const double n = heads;
  if (attention != "mla") return 4 * n * static_cast<double>(head_dim) * context;
  if (decode)
    return 2 * n * static_cast<double>(kv_lora_rank + qk_rope_head_dim) * context +
           2 * n * static_cast<double>(kv_lora_rank) * context;
  return 2 * n * static_cast<double>(qk_nope_head_dim + qk_rope_head_dim) * context +
         2 * n * static_cast<double>(v_head_dim) * context;
}

void ModelShape::validate(const std::string& where) const {
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw InputError(where + ": " + what);
  };
  need(layers >= 1 && layers <= 4096, "'layers' must be between 1 and 4096");
  need(dense_layers >= 0 && dense_layers <= layers, "'dense_layers' must be between 0 and 'layers'");
  need(hidden >= 1 && hidden <= (1u << 20), "'hidden' must be between 1 and 1048576");
  need(vocab >= 1 && vocab <= (1u << 24), "'vocab' must be between 1 and 16777216");
  need(attention == "mha" || attention == "gqa" || attention == "mla", "'attention' must be mha, gqa or mla");
  need(heads >= 1 && heads <= 4096, "'heads' must be between 1 and 4096");
  if (attention == "mla") {
    need(kv_lora_rank >= 1 && qk_nope_head_dim + qk_rope_head_dim >= 1 && v_head_dim >= 1,
         "an MLA model needs 'kv_lora_rank', 'qk_nope_head_dim' + 'qk_rope_head_dim' and 'v_head_dim' >= 1");
  } else {
    need(kv_heads >= 1 && kv_heads <= heads && heads % kv_heads == 0,
         "'kv_heads' must divide 'heads' (" + std::to_string(heads) + ")");
    need(head_dim >= 1 && head_dim <= 65536, "'head_dim' must be between 1 and 65536");
    need(attention != "mha" || kv_heads == heads, "an MHA model has 'kv_heads' equal to 'heads'");
  }
  need(dense_layers == 0 || (ffn >= 1 && ffn <= (1u << 24)),
       "dense layers need 'ffn' between 1 and 16777216");
  need(experts >= 0 && experts <= (1 << 16), "'experts' must be between 0 and 65536");
  if (experts > 0) {
    need(top_k >= 1 && top_k <= experts, "'top_k' must be between 1 and 'experts'");
    need(expert_ffn >= 1 && expert_ffn <= (1u << 24), "'expert_ffn' must be between 1 and 16777216");
    need(shared_experts >= 0 && shared_experts <= 64, "'shared_experts' must be between 0 and 64");
  } else {
    need(dense_layers == layers || ffn >= 1, "a dense model needs 'ffn'");
  }
  need(std::isfinite(expert_zipf) && expert_zipf >= 0 && expert_zipf <= 100,
       "'expert_zipf' must be in [0, 100]");
  with_context(where + ", weight_dtype", [&] { return dtype_bytes(weight_dtype); });
  for (const std::string* dtype : {&kv_dtype, &activation_dtype})
    with_context(where, [&] { return dtype_size(*dtype); });
}

const std::vector<ModelShape>& model_shapes() {
  static const std::vector<ModelShape> kModels = [] {
    std::vector<ModelShape> m;
    ModelShape ds;
    ds.name = "deepseek-v3";
    ds.description = "671B MoE: 61 layers (3 dense), 256 routed experts + 1 shared, top-8, MLA";
    ds.source =
        "huggingface.co/deepseek-ai/DeepSeek-V3 config.json; FP8 weights as released (arXiv:2412.19437)";
    ds.layers = 61, ds.dense_layers = 3, ds.hidden = 7168, ds.vocab = 129280, ds.attention = "mla";
    ds.heads = 128, ds.q_lora_rank = 1536, ds.kv_lora_rank = 512, ds.qk_nope_head_dim = 128;
    ds.qk_rope_head_dim = 64, ds.v_head_dim = 128, ds.ffn = 18432;
    ds.experts = 256, ds.shared_experts = 1, ds.top_k = 8, ds.expert_ffn = 2048;
    ds.published_params = 671e9;
    m.push_back(ds);
    ModelShape ll;
    ll.name = "llama3-70b";
    ll.description = "70B dense: 80 layers, GQA 64 heads / 8 KV heads, FFN 28672";
    ll.source = "huggingface.co/meta-llama/Meta-Llama-3-70B config.json; FP8 weights: assumption";
    ll.layers = 80, ll.dense_layers = 80, ll.hidden = 8192, ll.vocab = 128256, ll.attention = "gqa";
    ll.heads = 64, ll.kv_heads = 8, ll.head_dim = 128, ll.ffn = 28672;
    ll.published_params = 70.6e9;
    m.push_back(ll);
    ModelShape qw;
    qw.name = "qwen3-235b";
    qw.description = "235B MoE (22B active): 94 layers, 128 experts, top-8, no shared expert, GQA 64/4";
    qw.source = "huggingface.co/Qwen/Qwen3-235B-A22B config.json (every layer MoE); FP8 weights as released";
    qw.layers = 94, qw.dense_layers = 0, qw.hidden = 4096, qw.vocab = 151936, qw.attention = "gqa";
    qw.heads = 64, qw.kv_heads = 4, qw.head_dim = 128;
    qw.experts = 128, qw.top_k = 8, qw.expert_ffn = 1536;
    qw.published_params = 235e9;
    m.push_back(qw);
    return m;
  }();
  return kModels;
}

ModelShape model_from_json(const nlohmann::json& model, const std::string& where) {
  if (model.is_string()) return find_by_name(model_shapes(), model.get<std::string>(), "model");
  static const std::vector<std::string> kKnown{"name",
                                               "description",
                                               "source",
                                               "layers",
                                               "dense_layers",
                                               "hidden",
                                               "vocab",
                                               "attention",
                                               "heads",
                                               "kv_heads",
                                               "head_dim",
                                               "q_lora_rank",
                                               "kv_lora_rank",
                                               "qk_nope_head_dim",
                                               "qk_rope_head_dim",
                                               "v_head_dim",
                                               "ffn",
                                               "experts",
                                               "shared_experts",
                                               "top_k",
                                               "expert_ffn",
                                               "tied_embeddings",
                                               "weight_dtype",
                                               "kv_dtype",
                                               "activation_dtype",
                                               "expert_zipf",
                                               "published_params"};
  const std::string at = where + ", field 'model'";
  check_known_fields(model, kKnown, at);
  const FieldReader read{model, at};
  ModelShape m;
  m.name = "custom";
  read.text("name", m.name);
  read.text("description", m.description);
  read.text("source", m.source);
  read.integer("layers", m.layers, true);
  m.dense_layers = -1;
  if (const auto* v = read.field("dense_layers")) {
    if (!v->is_number_integer() || v->get<std::int64_t>() < 0 || v->get<std::int64_t>() > 4096)
      throw InputError(at + ": field 'dense_layers' must be an integer between 0 and 4096");
    m.dense_layers = v->get<int>();
  }
  read.integer("hidden", m.hidden, true);
  read.integer("vocab", m.vocab, true);
  read.text("attention", m.attention);
  read.integer("heads", m.heads, true);
  m.kv_heads = m.heads;
  read.integer("kv_heads", m.kv_heads, false);
  read.integer("head_dim", m.head_dim, false);
  if (m.head_dim == 0 && m.attention != "mla") m.head_dim = m.hidden / static_cast<std::uint64_t>(m.heads);
  read.integer("q_lora_rank", m.q_lora_rank, false);
  read.integer("kv_lora_rank", m.kv_lora_rank, false);
  read.integer("qk_nope_head_dim", m.qk_nope_head_dim, false);
  read.integer("qk_rope_head_dim", m.qk_rope_head_dim, false);
  read.integer("v_head_dim", m.v_head_dim, false);
  read.integer("ffn", m.ffn, false);
  read.integer("experts", m.experts, false);
  read.integer("shared_experts", m.shared_experts, false);
  read.integer("top_k", m.top_k, false);
  read.integer("expert_ffn", m.expert_ffn, false);
  if (m.dense_layers < 0) m.dense_layers = m.experts > 0 ? 0 : m.layers;
  if (const auto* v = read.field("tied_embeddings")) {
    if (!v->is_boolean()) throw InputError(at + ": field 'tied_embeddings' must be true or false");
    m.tied_embeddings = v->get<bool>();
  }
  read.text("weight_dtype", m.weight_dtype);
  read.text("kv_dtype", m.kv_dtype);
  read.text("activation_dtype", m.activation_dtype);
  for (const char* key : {"expert_zipf", "published_params"})
    if (const auto* v = read.field(key)) {
      if (!v->is_number()) throw InputError(at + ": field '" + key + "' must be a number");
      (std::string(key) == "expert_zipf" ? m.expert_zipf : m.published_params) = v->get<double>();
    }
  m.validate(at);
  return m;
}

nlohmann::ordered_json model_json(const ModelShape& m) {
  nlohmann::ordered_json out;
  out["name"] = m.name;
  out["layers"] = m.layers;
  out["dense_layers"] = m.dense_layers;
  out["hidden"] = m.hidden;
  out["vocab"] = m.vocab;
  out["attention"] = m.attention;
  out["heads"] = m.heads;
  if (m.attention == "mla") {
    out["q_lora_rank"] = m.q_lora_rank;
    out["kv_lora_rank"] = m.kv_lora_rank;
    out["qk_nope_head_dim"] = m.qk_nope_head_dim;
    out["qk_rope_head_dim"] = m.qk_rope_head_dim;
    out["v_head_dim"] = m.v_head_dim;
  } else {
    out["kv_heads"] = m.kv_heads;
    out["head_dim"] = m.head_dim;
  }
  out["ffn"] = m.ffn;
  out["experts"] = m.experts;
  out["shared_experts"] = m.shared_experts;
  out["top_k"] = m.top_k;
  out["expert_ffn"] = m.expert_ffn;
  out["tied_embeddings"] = m.tied_embeddings;
  out["weight_dtype"] = m.weight_dtype;
  out["kv_dtype"] = m.kv_dtype;
  out["activation_dtype"] = m.activation_dtype;
  out["expert_zipf"] = m.expert_zipf;
  out["params"] = m.total_params();
  out["active_params"] = m.active_params();
  out["published_params"] = m.published_params > 0 ? nlohmann::ordered_json(m.published_params) : nullptr;
  out["kv_bytes_per_token_layer"] = m.kv_bytes_per_token();
  out["source"] = m.source;
  return out;
}

}  // namespace ultrasim
