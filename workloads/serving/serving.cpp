#include "workloads/serving/serving.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "collectives/collective.hpp"  // even_chunks
#include "sim/machine/dtypes.hpp"
#include "sim/machine/program.hpp"  // check_engine_count
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/mix.hpp"
#include "topology/base/options.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "workloads/serving/requests.hpp"
#include "workloads/workload_file.hpp"

namespace ultrasim {

double ServingConfig::tokens_per_step() const {
  double tokens = 0, p = 1;
  for (int i = 0; i <= draft_tokens; ++i, p *= acceptance) tokens += p;
  return tokens;
}

void ServingConfig::validate() const {
  // Each option's own range is checked where it is declared (serving_options()); what follows ties
  // options together, or to the model.
  if (batch_sizes.empty()) throw InputError("--batch: give at least one batch size");
  for (const auto b : batch_sizes)
    if (b < 1 || b > (1u << 24))
      throw InputError("--batch must be between 1 and 16777216, not " + std::to_string(b));
  if (batch_sizes.size() > 64) throw InputError("--batch: at most 64 batch sizes per run");
  if (check_engine != 0)
    check_engine_count(
        check_engine, model.layers,
        "one exchange per layer at most; the model has " + std::to_string(model.layers) + " layers");
  for (const double t : tpot_targets)
    if (!(t > 0 && t <= kMaxTime)) throw InputError("--tpot-target must be a time in (0, 1e6] s");
  for (const std::string* dtype : {&dispatch_dtype, &combine_dtype}) dtype_size(*dtype);
  if (!weight_dtype.empty()) with_context("--weight-dtype", [&] { return dtype_bytes(weight_dtype); });
  if (!kv_dtype.empty()) with_context("--kv-dtype", [&] { return dtype_size(kv_dtype); });
  check_node_limit(max_nodes, node_chips, router);
  if (model.heads > 0 && tp > model.heads)
    throw InputError("--tp " + std::to_string(tp) + " is above the model's " + std::to_string(model.heads) +
                     " attention heads; each tp chip takes one head at least");
  if (replicate_hot > std::max(model.experts, 0))
    throw InputError("--replicate-hot " + std::to_string(replicate_hot) + " is above the model's " +
                     std::to_string(model.experts) + " routed experts");
  if (!tpot_targets.empty() && phase == "prefill")
    throw InputError("--tpot-target needs decode steps; --phase prefill runs none");
  if (!tpot_targets.empty() && lengths.empty() && output_len == 0)
    throw InputError("--tpot-target needs decode steps; --output-len 0 generates no token after the first");
  if (!expert_load.empty() && static_cast<int>(expert_load.size()) != model.experts)
    throw InputError("expert load '" + expert_load_source + "' has " + std::to_string(expert_load.size()) +
                     " values; the model has " + std::to_string(model.experts) + " experts");
  if (micro_batches == 2)
    for (const auto b : batch_sizes)
      if (b < 2)
        throw InputError("--micro-batches 2 needs batches of at least 2 requests, not " + std::to_string(b));
}

ServingLayout serving_layout(const ServingConfig& config, int chips) {
  ServingLayout l;
  l.chips = chips, l.tp = config.tp, l.pp = config.pp;
  if (chips % (config.tp * config.pp) != 0)
    throw InputError("--tp " + std::to_string(config.tp) + " x --pp " + std::to_string(config.pp) +
                     " does not divide the topology's " + std::to_string(chips) + " chips");
  if (config.model.layers % config.pp != 0)
    throw InputError("--pp " + std::to_string(config.pp) + " does not divide the model's " +
                     std::to_string(config.model.layers) + " layers");
  l.dp = chips / (config.tp * config.pp);
  l.ep = chips / config.pp;
  return l;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> draw_requests(const ServingConfig& config,
                                                                   std::uint64_t size, int batch) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  out.reserve(size);
  if (config.lengths.empty() && config.length_dist != "fixed" && size > 0) {
    RequestGenerator g;  // its lengths, not its arrivals
    g.rate = 1, g.count = size, g.input_len = config.input_len, g.output_len = config.output_len;
    g.length_dist = config.length_dist;
    g.seed = splitmix64(config.seed ^ pair_key(static_cast<std::uint32_t>(batch), 1));
    for (const ServingRequest& r : generate_requests(g)) out.emplace_back(r.prompt, r.output);
    return out;
  }
  for (std::uint64_t i = 0; i < size; ++i) {
    if (config.lengths.empty()) {
      out.emplace_back(config.input_len, config.output_len);
      continue;
    }
    const std::uint64_t draw =
        splitmix64(splitmix64(config.seed ^ pair_key(static_cast<std::uint32_t>(batch), 0)) ^ i);
    const auto pick = draw % config.lengths.size();
    out.push_back(config.lengths[pick]);
  }
  return out;
}

MoeConfig moe_layer_config(const ServingConfig& config, const std::vector<std::uint64_t>& chip_tokens,
                           int layer, int batch) {
  const ModelShape& m = config.model;
  MoeConfig moe;
  moe.experts = m.experts, moe.top_k = m.top_k, moe.hidden = m.hidden, moe.ffn = m.expert_ffn;
  moe.tokens_per_chip = std::max<std::uint64_t>(1, chip_tokens.front());
  moe.chip_tokens = chip_tokens;
  moe.router = config.router;
  moe.zipf = config.zipf.value_or(m.expert_zipf);
  moe.expert_load = config.expert_load, moe.expert_load_source = config.expert_load_source;
  moe.capacity_factor = config.capacity_factor;
  moe.dispatch_dtype = config.dispatch_dtype, moe.combine_dtype = config.combine_dtype;
  moe.weight_dtype = m.weight_dtype;
  moe.placement = config.placement, moe.replicate_hot = config.replicate_hot, moe.replicas = config.replicas;
  moe.batches = 1;
  moe.max_nodes = config.max_nodes, moe.node_chips = config.node_chips;
  moe.seed =
      config.seed + static_cast<std::uint64_t>(layer) * (1ull << 20) + static_cast<std::uint64_t>(batch);
  return moe;
}

std::vector<std::uint64_t> parse_batch_sizes(const std::string& text) {
  return parse_series(
      text, "--batch", "batch sizes",
      [](const std::string& item) {
        return static_cast<std::uint64_t>(with_context("--batch", [&] { return parse_count(item); }));
      },
      64);
}

namespace {

// What a data-parallel group computes in one step.
struct GroupWork {
  std::uint64_t requests = 0, tokens = 0, logits = 0;  // tokens through the layers; tokens needing logits
  double decode_score = 0, prefill_score = 0;          // sum over tokens of the contexts they attend
  double kv_tokens = 0;  // tokens of KV cache read (decode, a chunk's earlier context) or written (prefill)
  double decode_tokens = 0, decode_kv = 0;  // the decode items' tokens and their part of kv_tokens
  double prefill_requests = 0, prefill_tokens = 0;
};

std::vector<GroupWork> group_work(const ServingLayout& layout, const std::vector<StepItem>& items) {
  std::vector<GroupWork> groups(layout.dp);
  for (const StepItem& item : items) {
    GroupWork& g = groups.at(static_cast<std::size_t>(item.group));
    const double context = static_cast<double>(item.context), n = static_cast<double>(item.tokens);
    ++g.requests;
    g.tokens += item.tokens;
    if (item.decode) {  // token j of the request attends its context and the j + 1 tokens up to itself
      g.logits += item.tokens;
      g.decode_score += n * (context + 1) + n * (n - 1) / 2, g.kv_tokens += context;
      g.decode_tokens += n, g.decode_kv += context;
    } else {  // the chunk's token j attends context + j + 1 tokens
      g.logits += item.last ? 1 : 0;
      g.prefill_score += n * context + n * (n + 1) / 2, g.kv_tokens += context + n;
      g.prefill_requests += 1, g.prefill_tokens += n;
    }
  }
  return groups;
}

// A static batch's requests as items: request i on group i mod dp (`micro_batch_of` >= 0: only the
// requests of that half, alternate ones of the group); a decode step runs `per_request` tokens of each
// request (1, or 1 + the drafted tokens it verifies) at its mid-decode context.
std::vector<StepItem> batch_items(const ServingLayout& layout,
                                  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& requests,
                                  bool decode, int micro_batch_of, int per_request) {
  std::vector<StepItem> items;
  std::vector<std::uint64_t> seen(layout.dp, 0);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const int d = static_cast<int>(i % layout.dp);
    const auto n = seen[d]++;
    if (micro_batch_of >= 0 && static_cast<int>(n % 2) != micro_batch_of) continue;
    const auto [in, out] = requests[i];
    if (decode)
      items.push_back({d, in + out / 2, static_cast<std::uint64_t>(per_request), true, true});
    else
      items.push_back({d, 0, in, false, true});
  }
  return items;
}

}  // namespace

namespace {

// Builds a step's plan segment by segment (the formulas of serving.hpp), for one set of groups' work.
class StepPlanner {
 public:
  StepPlanner(const ServingConfig& config, const ServingLayout& layout, std::vector<GroupWork> groups,
              bool decode, int micro_batch)
      : config_(config),
        m_(config.model),
        layout_(layout),
        groups_(std::move(groups)),
        micro_batch_(micro_batch),
        H_(static_cast<double>(m_.hidden)),
        tp_(layout.tp),
        wb_(dtype_bytes(m_.weight_dtype)),
        ab_(dtype_size(m_.activation_dtype)),
        kv_split_(m_.kv_split(layout.tp)),
        chip_tokens_(layout.stage_chips()) {
    plan_.decode = decode;
    for (int d = 0; d < layout_.dp; ++d) {  // a group's tokens split evenly over its tp chips
      const auto parts = even_chunks(groups_[d].tokens, layout_.tp);
      for (int t = 0; t < layout_.tp; ++t) chip_tokens_[d * layout_.tp + t] = parts[t];
      busiest_ = std::max(busiest_, groups_[d].tokens);
      plan_.requests += groups_[d].requests, plan_.tokens += groups_[d].tokens;
    }
  }

  // Kernels per segment (assumption, counted from the open serving engines' decode graphs): attention
  // MHA / GQA 6 (norm, qkv, rope and cache write, attention, o, residual), MLA 8 (norm, q_a, q_b, kv_a,
  // norms, rope and cache write, attention, o); dense FFN 4 (norm, gate-up, activation, down); shared
  // experts 5 (norm, router and top-k, gate-up, activation, down); LM head 3 (norm, GEMM, sampling).
  // Each segment's work also lists its GEMMs and attention kernels with their shapes (ChipWork::ops), for
  // a chip profile's kernel tables: a GEMM (n, k) split over tp by n (k for the row-parallel o and down
  // projections), its weights its bytes; an attention kernel at (requests, mean context), its KV its bytes.
  void attention(int stage, int layer) {
    compute(
        stage, layer, "attention", m_.attention == "mla" ? 8 : 6,
        [&](ChipWork& w, const GroupWork& g, std::uint64_t) {
          const double a = m_.attention_params(), tokens = static_cast<double>(g.tokens);
          w.gemm_flops = 2 * a * tokens / tp_, w.rows = tokens;
          w.attention_flops = m_.score_flops(1, true) * g.decode_score / tp_;
          w.prefill_attention_flops = m_.score_flops(1, false) * g.prefill_score / tp_;
          w.bytes = a / tp_ * wb_ + m_.kv_bytes_per_token() * g.kv_tokens / kv_split_ + 2 * tokens * H_ * ab_;
          const auto gemms = m_.attention_gemms();
          for (std::size_t i = 0; i < gemms.size(); ++i) {
            const bool row_parallel = i + 1 == gemms.size();  // o
            gemm_op(w, tokens, row_parallel ? gemms[i].first : gemms[i].first / tp_,
                    row_parallel ? gemms[i].second / tp_ : gemms[i].second);
          }
          if (g.decode_tokens > 0)
            attention_op(w, KernelClass::kDecodeAttention, g.decode_tokens, g.decode_score / g.decode_tokens,
                         w.attention_flops, m_.kv_bytes_per_token() * g.decode_kv / kv_split_);
          if (g.prefill_requests > 0)
            attention_op(w, KernelClass::kPrefillAttention, g.prefill_requests,
                         g.prefill_tokens / g.prefill_requests, w.prefill_attention_flops,
                         m_.kv_bytes_per_token() * (g.kv_tokens - g.decode_kv) / kv_split_);
        });
  }
  void dense_ffn(int stage, int layer) {
    compute(stage, layer, "ffn", 4, [&](ChipWork& w, const GroupWork& g, std::uint64_t) {
      const double f = m_.dense_ffn_params() / tp_, tokens = static_cast<double>(g.tokens);
      w.gemm_flops = 2 * f * tokens, w.rows = tokens, w.bytes = f * wb_ + 2 * tokens * H_ * ab_;
      const double F = static_cast<double>(m_.ffn);
      gemm_op(w, tokens, 2 * F / tp_, H_), gemm_op(w, tokens, H_, F / tp_);
    });
  }
  void shared_experts(int stage, int layer) {
    compute(stage, layer, "shared experts", 5, [&](ChipWork& w, const GroupWork&, std::uint64_t tokens) {
      if (tokens == 0) return;
      const double shared = m_.shared_experts * m_.expert_params() + m_.router_params();
      const double n = static_cast<double>(tokens);
      w.gemm_flops = 2 * shared * n, w.rows = n, w.bytes = shared * wb_ + 2 * n * H_ * ab_;
      const double F = static_cast<double>(m_.expert_ffn) * m_.shared_experts;
      if (F > 0) gemm_op(w, n, 2 * F, H_), gemm_op(w, n, H_, F);
    });
  }
  void lm_head(int stage) {
    compute(stage, -1, "lm head", 3, [&](ChipWork& w, const GroupWork& g, std::uint64_t) {
      const double V = static_cast<double>(m_.vocab), logits = static_cast<double>(g.logits);
      w.gemm_flops = 2 * V * H_ / tp_ * logits, w.rows = logits;
      w.bytes = V * H_ / tp_ * wb_ + logits * V / tp_ * ab_;
      gemm_op(w, logits, V / tp_, H_);
    });
  }
  void tp_allreduce(int stage, int layer) {
    if (layout_.tp == 1 || busiest_ == 0) return;
    segment(Segment::kAllreduce, stage, layer, "tp").bytes =
        busiest_ * m_.hidden * static_cast<std::uint64_t>(ab_);
  }
  void moe_layer(int stage, int layer, int batch) {
    segment(Segment::kMoe, stage, layer, "moe").moe = moe_layer_config(config_, chip_tokens_, layer, batch);
  }
  void send_to_next(int stage) {
    Segment& s = segment(Segment::kSend, stage, -1, "pp");
    for (const auto n : chip_tokens_) s.chip_bytes.push_back(n * m_.hidden * static_cast<std::uint64_t>(ab_));
  }
  StepPlan take() { return std::move(plan_); }
  // The segments planned next stand for `n` identical ones (a compact plan).
  void repeat(int n) { repeat_ = n; }

 private:
  void gemm_op(ChipWork& w, double m, double n, double k) const {
    if (m <= 0) return;
    w.ops.push_back(gemm_kernel(KernelClass::kGemm, m_.weight_dtype, m, n, k, 1, wb_));
  }
  void attention_op(ChipWork& w, KernelClass c, double batch, double context, double flops,
                    double bytes) const {
    KernelOp op;
    op.op = c, op.attention = m_.attention, op.dtype = m_.activation_dtype;
    op.x = batch, op.y = context, op.flops = flops, op.bytes = bytes;
    op.heads = std::max(1, static_cast<int>(m_.heads / layout_.tp));
    if (m_.attention != "mla")
      op.kv_heads = std::max(1, m_.kv_heads / layout_.tp), op.head_dim = static_cast<int>(m_.head_dim);
    w.ops.push_back(op);
  }
  Segment& segment(Segment::Kind kind, int stage, int layer, const std::string& what) {
    Segment& s = plan_.segments.emplace_back();
    s.kind = kind, s.stage = stage, s.layer = layer, s.what = what, s.micro_batch = std::max(micro_batch_, 0);
    s.repeat = repeat_;
    return s;
  }
  // A compute segment: each chip's work from its group's work and its own tokens (a chip without
  // tokens reads, computes and launches nothing).
  template <class Work>
  void compute(int stage, int layer, const std::string& what, int kernels, Work&& work_of) {
    Segment& s = segment(Segment::kCompute, stage, layer, what);
    s.chips.resize(chip_tokens_.size());
    for (std::size_t c = 0; c < s.chips.size(); ++c)
      if (const GroupWork& g = groups_[c / layout_.tp]; g.tokens > 0) {
        ChipWork& w = s.chips[c];
        w.gemm_dtype = m_.weight_dtype, w.attention_dtype = m_.activation_dtype;
        work_of(w, g, chip_tokens_[c]);
        if (!w.empty()) w.kernels = kernels;
      }
  }

  const ServingConfig& config_;
  const ModelShape& m_;
  const ServingLayout& layout_;
  std::vector<GroupWork> groups_;
  int micro_batch_;
  double H_, tp_, wb_, ab_, kv_split_;
  std::vector<std::uint64_t> chip_tokens_;  // per stage rank: what it dispatches at the MoE layers
  std::uint64_t busiest_ = 0;               // the most tokens of one group
  int repeat_ = 1;
  StepPlan plan_;
};

}  // namespace

namespace {

// The plan of `items` (batch_items or a scheduler's), segments labelled micro-batch `micro_batch`.
StepPlan plan_items(const ServingConfig& config, const ServingLayout& layout,
                    const std::vector<StepItem>& items, int batch, bool compact, int micro_batch) {
  const bool decode = std::all_of(items.begin(), items.end(), [](const StepItem& i) { return i.decode; });
  const std::vector<GroupWork> groups = group_work(layout, items);
  StepPlanner step(config, layout, groups, decode, micro_batch);
  const ModelShape& m = config.model;
  const int per_stage = m.layers / layout.pp;
  // One layer as the step runs it; `repeat` of them where the plan is compact.
  auto layer = [&](StepPlanner& p, int stage, int l, bool moe, int repeat) {
    p.repeat(repeat);
    p.attention(stage, l);
    p.tp_allreduce(stage, l);
    if (moe) {
      p.shared_experts(stage, l);
      p.moe_layer(stage, l, batch);
    } else {
      p.dense_ffn(stage, l);
      p.tp_allreduce(stage, l);
    }
    p.repeat(1);
  };
  for (int stage = 0; stage < layout.pp; ++stage) {
    const int first = stage * per_stage, end = first + per_stage;
    if (!compact) {
      for (int l = first; l < end; ++l) layer(step, stage, l, m.is_moe_layer(l), 1);
    } else {  // the first dense and the first MoE layer of the stage, each with its count
      for (const bool moe : {false, true}) {
        int count = 0, at = -1;
        for (int l = first; l < end; ++l)
          if (m.is_moe_layer(l) == moe && count++ == 0) at = l;
        if (count > 0) layer(step, stage, at, moe, count);
      }
    }
    if (stage + 1 < layout.pp) step.send_to_next(stage);
  }
  step.lm_head(layout.pp - 1);
  StepPlan plan = step.take();
  double most = 0, sum = 0;
  for (const GroupWork& g : groups) {
    const double work = g.decode_score + g.prefill_score;
    most = std::max(most, work), sum += work;
    plan.host_requests = std::max(plan.host_requests, g.requests);
  }
  if (most > 0) plan.attention_balance = sum / layout.dp / most;
  std::vector<StepItem> drafted;  // the draft: K passes of one token per decoding request, last stage
  for (const StepItem& i : items)
    if (i.decode) drafted.push_back({i.group, i.context, 1, true, true});
  if (config.draft_tokens > 0 && !drafted.empty()) {
    StepPlanner draft(config, layout, group_work(layout, drafted), true, micro_batch);
    const int last = layout.pp - 1, K = config.draft_tokens, D = config.draft_layers;
    const bool moe = m.is_moe_layer(m.layers - 1);
    for (int d = 0; d < (compact ? 1 : K); ++d) {
      for (int l = 0; l < (compact ? 1 : D); ++l)  // past the model's layers: seeds of their own
        layer(draft, last, m.layers + d * D + l, moe, compact ? K * D : 1);
      draft.repeat(compact ? K : 1);
      draft.lm_head(last);
      draft.repeat(1);
    }
    for (auto& s : draft.take().segments) plan.segments.push_back(std::move(s));
  }
  return plan;
}

}  // namespace

StepPlan plan_step(const ServingConfig& config, const ServingLayout& layout,
                   const std::vector<std::pair<std::uint64_t, std::uint64_t>>& requests, bool decode,
                   int batch, int micro_batch_of) {
  const int verify = decode ? 1 + config.draft_tokens : 1;
  StepPlan plan = plan_items(config, layout, batch_items(layout, requests, decode, micro_batch_of, verify),
                             batch, false, micro_batch_of);
  plan.decode = decode;
  return plan;
}

StepPlan plan_iteration(const ServingConfig& config, const ServingLayout& layout,
                        const std::vector<StepItem>& items, int batch, bool compact) {
  return plan_items(config, layout, items, batch, compact, -1);
}

MemoryUse memory_use(const ServingConfig& config, const ServingLayout& layout, const ParamSet& params,
                     std::uint64_t batch_size) {
  const ModelShape& m = config.model;
  const double tp = layout.tp, wb = dtype_bytes(m.weight_dtype);
  const int per_stage = m.layers / layout.pp, S = layout.stage_chips();
  MemoryUse use;
  use.capacity = serving_chip_table().read(params).hbm_capacity;
  // Experts per chip: the placement's most, replicas included.
  int most_experts = 0;
  if (m.moe()) {
    std::vector<int> count(S, 0);
    for (int c :
         place_instances(moe_layer_config(config, std::vector<std::uint64_t>(S, 1), 0, 0), S).instance_chip)
      most_experts = std::max(most_experts, ++count[c]);
  }
  auto layer_weights = [&](int layer) {
    return m.attention_params() / tp +
           (m.is_moe_layer(layer) ? (most_experts + m.shared_experts) * m.expert_params() + m.router_params()
                                  : m.dense_ffn_params() / tp);
  };
  const int draft_layers = config.draft_tokens > 0 ? config.draft_layers : 0;  // on the last stage
  for (int stage = 0; stage < layout.pp; ++stage) {
    double weights = 0;
    for (int layer = stage * per_stage; layer < (stage + 1) * per_stage; ++layer)
      weights += layer_weights(layer);
    if (stage + 1 == layout.pp) weights += draft_layers * layer_weights(m.layers - 1);
    if (stage == 0) weights += m.embedding_params() / tp;
    if (stage + 1 == layout.pp && !(m.tied_embeddings && layout.pp == 1))
      weights += m.embedding_params() / tp;
    weights *= wb;
    if (weights > use.weights) use.weights = weights, use.chip = stage * S;
  }
  // KV, paged: the group with the most requests, each at the context the simulated step holds (decode:
  // input + output / 2 and the drafted tokens, the mean over a request's decode as in continuous batching;
  // prefill only: the input) in blocks of kKvBlock tokens (the mean over drawn lengths), one batch per
  // stage in flight (pp batches), this stage's layers (the last's with the draft's), split kv_split ways.
  constexpr double kKvBlock = 16;  // vLLM's default block size
  const double kv_split = m.kv_split(layout.tp);
  auto held = [&](std::uint64_t in, std::uint64_t out) {
    const double context =
        config.phase == "prefill"
            ? static_cast<double>(in)
            : static_cast<double>(in + out / 2 + static_cast<std::uint64_t>(config.draft_tokens));
    return std::ceil(context / kKvBlock) * kKvBlock;
  };
  double context = 0;
  if (config.lengths.empty()) {
    context = held(config.input_len, config.output_len);
  } else {
    for (const auto& [in, out] : config.lengths) context += held(in, out);
    context /= static_cast<double>(config.lengths.size());
  }
  const double requests = std::ceil(static_cast<double>(batch_size) / layout.dp) * layout.pp;
  use.kv = requests * context * m.kv_bytes_per_token() * (per_stage + draft_layers) / kv_split;
  return use;
}

void check_memory(const MemoryUse& use, std::uint64_t batch_size) {
  auto gib = [](double bytes) { return fixed_text(bytes / (1024.0 * 1024 * 1024), 1) + " GiB"; };
  if (use.weights > use.capacity)
    throw InputError("the model does not fit in HBM: chip " + std::to_string(use.chip) + " holds " +
                     gib(use.weights) + " of weights, HBM is " + gib(use.capacity) + " (" +
                     gib(use.weights - use.capacity) + " short; more chips, --tp or --pp spread it)");
  if (use.weights + use.kv > use.capacity)
    throw InputError("the KV cache of batch " + std::to_string(batch_size) + " does not fit: " +
                     gib(use.weights) + " of weights + " + gib(use.kv) + " of KV cache per chip > HBM " +
                     gib(use.capacity) + " (" + gib(use.weights + use.kv - use.capacity) + " short)");
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> read_lengths(const std::string& path) {
  const std::string text =
      read_input_file(path, "lengths file '" + path + "'", "a JSON array or CSV of input,output");
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  auto check = [&](double in, double o, const std::string& where) {
    if (!(in >= 1 && in <= (1u << 24) && o >= 0 && o <= (1u << 24) && in == std::floor(in) &&
          o == std::floor(o)))
      throw InputError("lengths file '" + path + "' " + where +
                       ": expected whole input >= 1 and output >= 0 tokens, at most 16777216");
    out.emplace_back(static_cast<std::uint64_t>(in), static_cast<std::uint64_t>(o));
  };
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    const nlohmann::json j = parse_json_text(text, "lengths file '" + path + "'");
    if (!j.is_array()) throw InputError("lengths file '" + path + "': expected an array of [input, output]");
    for (std::size_t i = 0; i < j.size(); ++i) {
      const auto& e = j[i];
      if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_number())
        throw InputError("lengths file '" + path + "' entry " + std::to_string(i) +
                         ": expected [input, output]");
      check(e[0].get<double>(), e[1].get<double>(), "entry " + std::to_string(i));
    }
  } else {
    std::istringstream lines(text);
    std::string line;
    for (int n = 1; std::getline(lines, line); ++n) {
      if (line.find_first_not_of(" \t\r") == std::string::npos || line[line.find_first_not_of(" \t")] == '#')
        continue;
      std::replace(line.begin(), line.end(), ',', ' ');
      std::istringstream fields(line);
      double in = -1, o = -1;
      std::string rest;
      if (!(fields >> in >> o) || (fields >> rest))
        throw InputError("lengths file '" + path + "' line " + std::to_string(n) +
                         ": expected 'input,output'");
      check(in, o, "line " + std::to_string(n));
    }
  }
  if (out.empty()) throw InputError("lengths file '" + path + "': no requests");
  if (out.size() > 10000000) throw InputError("lengths file '" + path + "': more than 10000000 requests");
  return out;
}

ServingConfig serving_config_from_json(const nlohmann::json& w, const std::string& file) {
  const std::string where = "workload file '" + file + "'";
  ServingConfig c;
  read_options(serving_options(), w, where, {"workload", "description", "set"}, c);
  c.overrides = set_overrides(w, where);
  with_context(where, [&] { c.validate(); });
  return c;
}

}  // namespace ultrasim
