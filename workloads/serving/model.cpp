#include "workloads/serving/model.hpp"

#include <cmath>
#include <tuple>

#include "sim/machine/chip_model.hpp"  // dtype_bytes
#include "sim/machine/dtypes.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/options.hpp"
#include "topology/base/suggest.hpp"

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

std::vector<std::pair<double, double>> ModelShape::attention_gemms() const {
  const double H = static_cast<double>(hidden), n = heads;
  if (attention != "mla") {
    const double d = static_cast<double>(head_dim);
    return {{(n + 2.0 * kv_heads) * d, H}, {H, n * d}};
  }
  const double nope = static_cast<double>(qk_nope_head_dim), rope = static_cast<double>(qk_rope_head_dim);
  const double v = static_cast<double>(v_head_dim), qr = static_cast<double>(q_lora_rank);
  const double kvr = static_cast<double>(kv_lora_rank);
  std::vector<std::pair<double, double>> out;
  if (qr > 0)
    out = {{qr + kvr + rope, H}, {n * (nope + rope), qr}};
  else
    out = {{n * (nope + rope), H}, {kvr + rope, H}};
  out.push_back({n * (nope + v), kvr});
  out.push_back({H, n * v});
  return out;
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

namespace {

// A dense GQA transformer (MHA when kv_heads = heads) with a gated FFN. A model whose FFN has two matrices
// (GPT-3's GELU, Nemotron's squared ReLU: 2 H F' weights) is given the gated width F = 2 F' / 3 of the
// same weights and FLOPs.
ModelShape dense_shape(std::string name, std::string description, std::string source, int layers,
                       std::uint64_t hidden, int heads, int kv_heads, std::uint64_t ffn, std::uint64_t vocab,
                       double published) {
  ModelShape m;
  m.name = std::move(name), m.description = std::move(description), m.source = std::move(source);
  m.layers = layers, m.dense_layers = layers, m.hidden = hidden, m.vocab = vocab, m.attention = "gqa";
  m.heads = heads, m.kv_heads = kv_heads, m.head_dim = hidden / heads, m.ffn = ffn;
  m.weight_dtype = "bfloat16";
  m.published_params = published;
  return m;
}

// The shapes of published training runs (results/validation/training/).
std::vector<ModelShape> training_shapes() {
  std::vector<ModelShape> m;
  const std::string hf = "huggingface.co/";
  m.push_back(dense_shape("llama3-8b", "8B dense: 32 layers, GQA 32 / 8, FFN 14336",
                          hf + "meta-llama/Meta-Llama-3-8B config.json", 32, 4096, 32, 8, 14336, 128256,
                          8.03e9));
  m.push_back(dense_shape("llama3-405b", "405B dense: 126 layers, GQA 128 / 8, FFN 53248",
                          hf + "meta-llama/Llama-3.1-405B config.json", 126, 16384, 128, 8, 53248, 128256,
                          405.9e9));
  m.push_back(dense_shape("llama2-7b", "7B dense: 32 layers, MHA 32 heads, FFN 11008",
                          hf + "meta-llama/Llama-2-7b-hf config.json", 32, 4096, 32, 32, 11008, 32000,
                          6.74e9));
  m.push_back(dense_shape("llama2-70b", "70B dense: 80 layers, GQA 64 / 8, FFN 28672",
                          hf + "meta-llama/Llama-2-70b-hf config.json", 80, 8192, 64, 8, 28672, 32000,
                          69.0e9));
  m.push_back(dense_shape("gpt3-175b", "175B dense: 96 layers, MHA 96 heads, GELU FFN 49152 (as gated 32768)",
                          "Brown et al. 2020 (arXiv:2005.14165) Table 2.1; NeMo's GPT-3 175B config", 96,
                          12288, 96, 96, 32768, 50257, 175e9));
  m.push_back(dense_shape(
      "nemotron4-340b", "340B dense: 96 layers, GQA 96 / 8, squared-ReLU FFN 73728 (as gated 49152)",
      "NVIDIA Nemotron-4 340B report (arXiv:2406.11704) Table 1", 96, 18432, 96, 8, 49152, 256000, 341e9));
  for (auto [name, layers, hidden, heads, ffn, vocab, published] :
       {std::tuple{"mixtral-8x7b", 32, 4096, 32, 14336, 32000, 46.7e9},
        std::tuple{"mixtral-8x22b", 56, 6144, 48, 16384, 32768, 141e9}}) {
    ModelShape x =
        dense_shape(name, "",
                    hf + "mistralai/" +
                        (std::string(name) == "mixtral-8x7b" ? "Mixtral-8x7B-v0.1" : "Mixtral-8x22B-v0.1") +
                        " config.json",
                    layers, hidden, heads, 8, 0, vocab, published);
    x.description = std::to_string(static_cast<int>(published / 1e9)) + "B MoE: " + std::to_string(layers) +
                    " layers, 8 experts, top-2, GQA " + std::to_string(heads) + " / 8";
    x.dense_layers = 0, x.experts = 8, x.top_k = 2, x.expert_ffn = ffn;
    m.push_back(x);
  }
  return m;
}

}  // namespace

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
    for (ModelShape& more : training_shapes()) m.push_back(std::move(more));
    return m;
  }();
  return kModels;
}

namespace {

// A model object's fields, declared once; the source of each is the model's own (its "source" field).
const OptionTable<ModelShape>& model_fields() {
  static const OptionTable<ModelShape> table = [] {
    using M = ModelShape;
    OptionTable<M> t;
    const std::string own = "the model's";
    for (auto [name, field] :
         {std::pair{"name", &M::name}, {"description", &M::description}, {"source", &M::source}})
      t.push_back(
          text_option<M>(name, field, {}, "what it is called, what it is, where its numbers come from", own));
    auto size = [&](const char* name, auto field, std::int64_t lo, std::int64_t hi, bool required = false) {
      t.push_back(integer_option<M>(name, field, lo, hi, "a dimension of the shape (model.hpp)", own));
      t.back().required = required;
    };
    size("layers", &M::layers, 1, 4096, true);
    size("dense_layers", &M::dense_layers, 0, 4096);
    size("hidden", &M::hidden, 1, 1 << 20, true);
    size("vocab", &M::vocab, 1, 1 << 24, true);
    t.push_back(
        text_option<M>("attention", &M::attention, {"mha", "gqa", "mla"}, "the attention's kind", own));
    size("heads", &M::heads, 1, 4096, true);
    size("kv_heads", &M::kv_heads, 1, 4096);
    size("head_dim", &M::head_dim, 1, 65536);
    for (auto [name, field] : {std::pair{"q_lora_rank", &M::q_lora_rank},
                               {"kv_lora_rank", &M::kv_lora_rank},
                               {"qk_nope_head_dim", &M::qk_nope_head_dim},
                               {"qk_rope_head_dim", &M::qk_rope_head_dim},
                               {"v_head_dim", &M::v_head_dim}})
      size(name, field, 0, 1 << 20);
    size("ffn", &M::ffn, 0, 1 << 24);
    size("experts", &M::experts, 0, 1 << 16);
    size("shared_experts", &M::shared_experts, 0, 64);
    size("top_k", &M::top_k, 0, 1 << 16);
    size("expert_ffn", &M::expert_ffn, 0, 1 << 24);
    t.push_back(
        bool_option<M>("tied_embeddings", &M::tied_embeddings, "the LM head shares the embedding", own));
    for (auto [name, field] : {std::pair{"weight_dtype", &M::weight_dtype},
                               {"kv_dtype", &M::kv_dtype},
                               {"activation_dtype", &M::activation_dtype}})
      t.push_back(text_option<M>(name, field, {}, "an element's dtype", own));
    t.push_back(number_option<M>("expert_zipf", &M::expert_zipf, 0, 100, "the experts' popularity", own));
    t.push_back(number_option<M>("published_params", &M::published_params, 0, 1e16, "as published", own));
    return t;
  }();
  return table;
}

}  // namespace

ModelShape model_from_json(const nlohmann::json& model, const std::string& where) {
  if (model.is_string()) return find_by_name(model_shapes(), model.get<std::string>(), "model");
  const std::string at = where + ", field 'model'";
  ModelShape m;
  m.name = "custom";
  m.dense_layers = -1;  // unset: derived below, as are kv_heads and head_dim
  read_options(model_fields(), model, at, {}, m);
  if (m.kv_heads == 0) m.kv_heads = m.heads;
  if (m.head_dim == 0 && m.attention != "mla") m.head_dim = m.hidden / static_cast<std::uint64_t>(m.heads);
  if (m.dense_layers < 0) m.dense_layers = m.experts > 0 ? 0 : m.layers;
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
