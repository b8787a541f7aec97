#include "workloads/training/train_run.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>

#include "sim/engines/runner.hpp"
#include "sim/machine/chip_model.hpp"
#include "sim/machine/dtypes.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/units.hpp"
#include "workloads/collective/collective_job.hpp"
#include "workloads/serving/serving.hpp"
#include "workloads/training/pipeline_schedule.hpp"
#include "workloads/training/train_model.hpp"
#include "workloads/training/training.hpp"
#include "workloads/workload_file.hpp"
#include "workloads/workload_metrics.hpp"

namespace ultrasim {
// Named, not anonymous: TrainSession's Impl holds a TrainFabric.
namespace train_internal {

using GroupList = std::vector<std::vector<int>>;

// The groups along one axis of the layout: tp, cp, pp, dp (data x context: the gradients' group), ep (an
// expert group), edp (the expert weights' data-parallel group, over context too).
GroupList axis_groups(const TrainConfig& c, int chips, const std::string& axis) {
  const int dp = c.dp(chips);
  std::map<std::vector<int>, std::vector<int>> by_rest;  // the other coordinates -> the ranks, ascending
  for (int s = 0; s < c.pp; ++s)
    for (int d = 0; d < dp; ++d)
      for (int k = 0; k < c.cp; ++k)
        for (int t = 0; t < c.tp; ++t) {
          const int q = t + c.tp * (k + c.cp * d);  // the expert grid: q = et + etp (e + ep b)
          const int et = q % c.etp, e = q / c.etp % c.ep, b = q / (c.etp * c.ep);
          std::vector<int> rest = axis == "tp"   ? std::vector<int>{k, d, s}
                                  : axis == "cp" ? std::vector<int>{t, d, s}
                                  : axis == "pp" ? std::vector<int>{t, k, d}
                                  : axis == "dp" ? std::vector<int>{t, s}
                                  : axis == "ep" ? std::vector<int>{et, b, s}
                                                 : std::vector<int>{et, e, s};  // edp
          by_rest[rest].push_back(c.rank(t, k, d, s, chips));
        }
  GroupList groups;
  for (auto& [rest, members] : by_rest) {
    std::sort(members.begin(), members.end());
    groups.push_back(std::move(members));
  }
  return groups;
}

std::string chips_spec(const GroupList& groups) {
  std::string spec = "chips:";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (g > 0) spec += "/";
    for (std::size_t i = 0; i < groups[g].size(); ++i)
      spec += (i > 0 ? "," : "") + std::to_string(groups[g][i]);
  }
  return spec;
}

// What one priced collective reports.
struct PricedCollective {
  std::string kind, collective, algorithm;
  std::uint64_t bytes = 0;
  int group_size = 0, groups = 0;
  double seconds = 0;
  std::string engine;
};

// The step's fabric: the machine, the chip model and every collective priced once.
class TrainFabric {
 public:
  explicit TrainFabric(const TrainConfig& c);
  const ChipModel& chip() const { return *chip_; }
  const ParamSet& params() const { return params_; }
  const Machine& machine() const { return machine_; }
  const ChipProfile& profile() const { return profile_; }
  // Seconds of `collective` of `bytes` on every group of `kind` at once (a p2p: each chip to the next).
  double price(const std::string& kind, const std::string& collective, std::uint64_t bytes);
  const std::vector<PricedCollective>& priced() const { return priced_; }
  std::string algorithm_of(const std::string& kind, const std::string& collective) const;
  // The same fabric for another layout: its groups afresh, the simulations kept.
  void relayout(const TrainConfig& c) {
    config_ = c;
    groups_.clear();
    priced_.clear();
  }

 private:
  bool spans_domains(const GroupList& groups) const;
  TrainConfig config_;
  ChipProfile profile_;
  ParamSet extra_;
  Machine machine_;
  ParamSet params_;
  std::unique_ptr<ChipModel> chip_;
  std::map<std::string, GroupList> groups_;
  // By (groups, collective, algorithm, bytes): kept across layouts (relayout).
  std::map<std::tuple<std::string, std::string, std::string, std::uint64_t>, PricedCollective> cache_;
  std::vector<PricedCollective> priced_;
};

std::vector<const AlgorithmEntry*> fabric_algorithms(const TrainConfig& c) {
  std::vector<const AlgorithmEntry*> out;
  for (const char* coll : {"allreduce", "reducescatter", "allgather"}) {
    out.push_back(&find_algorithm(coll, c.tp_algorithm));
    out.push_back(&find_algorithm(coll, c.dp_algorithm == "auto" ? "hierarchical" : c.dp_algorithm));
    out.push_back(&find_algorithm(coll, "ring"));
  }
  out.push_back(&find_algorithm("alltoall", "direct"));
  return out;
}

TrainFabric::TrainFabric(const TrainConfig& c) : config_(c), profile_(chip_profile(c.chip, c.topology)) {
  extra_ = ParamSet(serving_params());
  extra_.declare(algorithm_params(fabric_algorithms(c)));
  std::vector<std::pair<std::string, std::string>> values;
  for (const ChipValue& v : profile_.values) values.emplace_back(v.name, v.value);
  values.insert(values.end(), c.overrides.begin(), c.overrides.end());
  ParamSet probe = extra_;
  // A chip has a message to every other in flight only in the expert all-to-all; the rings and the
  // hierarchical rings keep one or two (the memory guard counts what a run may post).
  machine_ = build_machine(c.topology, probe.apply_known(c.overrides), extra_.names(), c.ep > 1);
  values.emplace_back("groups", "domain");  // the hierarchical algorithms' level: the scale-up domain
  params_ = with_params(machine_.topology->params(), extra_.specs(), values);
  chip_ = std::make_unique<ChipModel>(params_);
}

bool TrainFabric::spans_domains(const GroupList& groups) const {
  std::vector<int> labels;
  try {
    labels = level_labels("domain", *machine_.topology);
  } catch (const InputError&) {
    return false;  // a single scale-up domain
  }
  for (const auto& g : groups)
    for (int r : g)
      if (labels[r] != labels[g.front()]) return true;
  return false;
}

std::string TrainFabric::algorithm_of(const std::string& kind, const std::string& collective) const {
  if (collective == "alltoall") return "direct";
  if (kind == "tp") return config_.tp_algorithm;
  if (kind == "dp" || kind == "edp") {
    if (config_.dp_algorithm != "auto") return config_.dp_algorithm;
    const auto it = groups_.find(kind);
    const bool hierarchical =
        find_algorithm(collective, "hierarchical").make_with_defaults()->runs_on_groups();
    return hierarchical && it != groups_.end() && spans_domains(it->second) ? "hierarchical" : "ring";
  }
  return "ring";
}

double TrainFabric::price(const std::string& kind, const std::string& collective, std::uint64_t bytes) {
  if (bytes == 0) return 0;
  if (!groups_.count(kind)) groups_[kind] = axis_groups(config_, machine_.p(), kind);
  const GroupList& groups = groups_.at(kind);
  if (groups.front().size() < 2) return 0;
  const StageCollective one{collective, algorithm_of(kind, collective), chips_spec(groups), bytes};
  // The same groups, collective, algorithm and size are the same simulation, whatever layout asked.
  const auto key = std::make_tuple(one.groups, collective, one.algorithm, bytes);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    TrainingConfig step;
    step.topology = config_.topology;
    TrainingStage stage;
    stage.name = kind + " " + collective;
    if (collective == "send")
      stage.p2p = one;
    else
      stage.collectives.push_back(one);
    step.stages.push_back(stage);
    TrainingStep program(step, *machine_.topology, params_);
    RunOptions options;
    options.engine = parse_engine(config_.engine);
    options.contended = Engine::kFast;
    options.simgrid_fallback = false;
    SimResult r = simulate(machine_, program, options);
    // The stack's launch latency, once per collective (a send is not a collective launch).
    if (collective != "send") r.time_s += machine_.protocol.launch_for(one.algorithm);
    if (r.verdict.wrong > 0)
      throw SimulationError("the " + kind + " " + collective + " did not verify: " + r.verdict.first_error);
    // A send's time is one chip's: every group sends along its chain at once, each link once.
    it = cache_
             .emplace(key, PricedCollective{kind, collective, one.algorithm, bytes,
                                            static_cast<int>(groups.front().size()),
                                            static_cast<int>(groups.size()), r.time_s, engine_name(r.engine)})
             .first;
  }
  const auto seen = std::find_if(priced_.begin(), priced_.end(), [&](const PricedCollective& p) {
    return p.kind == kind && p.collective == collective && p.bytes == bytes;
  });
  if (seen == priced_.end()) {
    priced_.push_back(it->second);
    priced_.back().kind = kind;
  }
  return it->second.seconds;
}

}  // namespace train_internal

namespace {

using train_internal::GroupList;
using train_internal::PricedCollective;
using train_internal::TrainFabric;

// ExposedComm communication of one pass, by kind.
struct ExposedComm {
  double tp = 0, cp = 0, ep = 0, dp = 0;
  ExposedComm& operator+=(const ExposedComm& o) {
    tp += o.tp, cp += o.cp, ep += o.ep, dp += o.dp;
    return *this;
  }
};

// A model chunk's passes for one micro-batch: their seconds (compute + exposed communication).
struct ChunkPasses {
  double forward = 0, backward = 0;
  double forward_compute = 0, backward_compute = 0;
  ExposedComm forward_exposed, backward_exposed;
  double model_flops = 0, hardware_flops = 0;
  ExposedComm volume;  // the collectives' buffers (nccl-tests' sizes), bytes, by kind
};

// Per stage at the step's end: the gradients' reduction and the weights' gather, the optimizer.
struct StageTail {
  double reduce = 0, gather = 0, optimizer = 0;
  double volume = 0;  // the collectives' buffers, bytes
};

struct TrainPlan {
  std::vector<int> layers_of_chunk;
  std::vector<ChunkPasses> chunks;  // by model chunk j
  double send = 0, send_bytes = 0;  // one micro-batch between stages: s, bytes
  ExpertSkew skew;                  // the busiest expert rank's load over the mean
  std::vector<StageTail> ends;      // by stage
  std::vector<TrainMemory> memory;
  std::vector<std::vector<PipePass>> order;
};

std::uint64_t whole_bytes(double bytes) {
  return static_cast<std::uint64_t>(bytes + 0.5);
}

// A pass's communication beside compute `compute`: exposed whole, or overlapped (taking comm_share).
double exposed_s(const ChipModel& chip, double compute, double comm, bool overlap) {
  return overlap ? chip.overlapped_seconds(compute, comm) - compute : comm;
}

// One layer's collectives, priced: tp all-reduces (or reduce-scatter + all-gather pairs, the same bytes),
// the expert all-to-alls, the context-parallel KV all-gather (and its gradients' reduce-scatter).
struct LayerCollectives {
  double tp = 0, ep = 0, cp = 0;                    // one of each, s
  double tp_bytes = 0, ep_bytes = 0, cp_bytes = 0;  // its buffer
};
LayerCollectives layer_comm(const TrainConfig& c, TrainFabric& fabric, int layer) {
  const ModelShape& m = c.model;
  const double T = static_cast<double>(c.micro_batch) * c.seq_len / c.cp, H = static_cast<double>(m.hidden);
  LayerCollectives out;
  if (c.tp > 1) out.tp = fabric.price("tp", "allreduce", whole_bytes(out.tp_bytes = T * H * 2));
  if (c.ep > 1 && m.is_moe_layer(layer))  // dispatch (8-bit under fp8) and combine (bf16): 1.5 bytes each
    out.ep =
        fabric.price("ep", "alltoall",
                     whole_bytes(out.ep_bytes = T / c.tp * m.top_k * H * (c.precision == "bf16" ? 2 : 1.5)));
  if (c.cp > 1) {
    const double kv = m.attention == "mla"
                          ? 2.0 * m.heads *
                                static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) /
                                c.tp
                          : 4.0 * m.kv_heads * static_cast<double>(m.head_dim) / m.kv_split(c.tp);
    out.cp = fabric.price("cp", "allgather", whole_bytes(out.cp_bytes = T * c.cp * kv));
  }
  return out;
}

ChunkPasses chunk_cost(const TrainConfig& c, TrainFabric& fabric, int first, int layers, bool head,
                       const ExpertSkew& skew) {
  const ChipModel& chip = fabric.chip();
  ChunkPasses cost;
  const int tp_passes = c.recompute == "full" ? 4 : 2;  // backward: its own two, and the forward's again
  for (int l = first; l < first + layers; ++l) {
    const LayerCompute lc = layer_compute(c, chip, l, skew.compute);
    LayerCollectives comm = layer_comm(c, fabric, l);
    comm.ep *= skew.exchange;  // the busiest rank's sends or receives set the all-to-all's pace
    ExposedComm f, b;
    f.tp = exposed_s(chip, lc.forward_s, 2 * comm.tp, c.tp_comm_overlap);
    b.tp = exposed_s(chip, lc.backward_s, tp_passes * comm.tp, c.tp_comm_overlap);
    f.ep = exposed_s(chip, lc.forward_s, 2 * comm.ep, c.ep_overlap);
    b.ep = exposed_s(chip, lc.backward_s, 2 * comm.ep, c.ep_overlap);
    f.cp = std::max(0.0, comm.cp - lc.attention_s);  // ring attention: under the core
    b.cp = std::max(0.0, 2 * comm.cp - 2.5 * lc.attention_s);
    cost.forward_compute += lc.forward_s;
    cost.backward_compute += lc.backward_s;
    cost.forward_exposed += f;
    cost.backward_exposed += b;
    cost.model_flops += lc.model_flops;
    cost.hardware_flops += lc.hardware_flops;
    cost.volume.tp += (2 + tp_passes) * comm.tp_bytes;
    cost.volume.ep += 4 * comm.ep_bytes;
    cost.volume.cp += 3 * comm.cp_bytes;
  }
  if (head) {
    const LayerCompute lc = layer_compute(c, chip, -1);
    cost.forward_compute += lc.forward_s;
    cost.backward_compute += lc.backward_s;
    cost.model_flops += lc.model_flops;
    cost.hardware_flops += lc.hardware_flops;
  }
  return cost;
}

// ZeRO-3: each pass gathers its chunk's weights first (prefetched under the previous pass), the backward
// reduce-scatters its gradients after; what the pass does not cover is exposed.
void add_zero3(const TrainConfig& c, TrainFabric& fabric, ChunkPasses& cost, double dense, double expert) {
  const double gb = dtype_size(c.grad_reduce_dtype);
  const double gather = fabric.price("dp", "allgather", whole_bytes(2 * dense)) +
                        (expert > 0 ? fabric.price("edp", "allgather", whole_bytes(2 * expert)) : 0);
  const double reduce = fabric.price("dp", "reducescatter", whole_bytes(gb * dense)) +
                        (expert > 0 ? fabric.price("edp", "reducescatter", whole_bytes(gb * expert)) : 0);
  const double f = cost.forward_compute, b = cost.backward_compute;
  cost.volume.dp += (2 * 2 + gb) * (dense + expert);  // the weights gathered twice, the gradients reduced
  cost.forward_exposed.dp += std::max(0.0, gather - f);
  cost.backward_exposed.dp += std::max(0.0, gather + reduce - b);
}

StageTail stage_end(const TrainConfig& c, TrainFabric& fabric, const StageWeights& w, int chips) {
  StageTail end;
  end.optimizer = optimizer_seconds(c, fabric.chip(), w, chips);
  if (c.zero >= 3) return end;
  const double gb = dtype_size(c.grad_reduce_dtype);
  const char* reduce = c.zero == 0 ? "allreduce" : "reducescatter";
  end.reduce = fabric.price("dp", reduce, whole_bytes(gb * w.dense)) +
               (w.expert > 0 ? fabric.price("edp", reduce, whole_bytes(gb * w.expert)) : 0);
  if (c.zero >= 1)
    end.gather = fabric.price("dp", "allgather", whole_bytes(2 * w.dense)) +
                 (w.expert > 0 ? fabric.price("edp", "allgather", whole_bytes(2 * w.expert)) : 0);
  end.volume = (gb + (c.zero >= 1 ? 2 : 0)) * (w.dense + w.expert);
  return end;
}

// The step's plan: memory first (refused before anything is simulated), then every price.
TrainPlan plan_train_step(const TrainConfig& c, TrainFabric& fabric) {
  const int chips = fabric.machine().p(), p = c.pp, v = c.vp, m = c.micro_batches(chips);
  TrainPlan plan;
  plan.layers_of_chunk = chunk_layers(c.model.layers, p * v);
  plan.order = find_schedule(c.schedule).order(p, m, v);
  const std::vector<int> peak = peak_in_flight(plan.order);
  const double capacity = serving_chip_table().read(fabric.params()).hbm_capacity;
  for (int s = 0; s < p; ++s) {
    plan.memory.push_back(stage_memory(c, plan.layers_of_chunk, s, peak[s], chips));
    const TrainMemory& mem = plan.memory.back();
    if (mem.total() > capacity)
      throw InputError("the step does not fit: pipeline stage " + std::to_string(s) + " needs " +
                       fixed_text(mem.total() / (1ull << 30), 1) + " GiB per chip (weights " +
                       fixed_text(mem.weights / (1ull << 30), 1) + ", gradients " +
                       fixed_text(mem.gradients / (1ull << 30), 1) + ", optimizer " +
                       fixed_text(mem.optimizer / (1ull << 30), 1) + ", activations " +
                       fixed_text(mem.activations / (1ull << 30), 1) + " for " + std::to_string(peak[s]) +
                       " micro-batch chunks in flight, logits and buffers " +
                       fixed_text((mem.logits + mem.buffers) / (1ull << 30), 1) + ") of " +
                       fixed_text(capacity / (1ull << 30), 1) +
                       " GiB HBM; raise --tp, --pp, --zero or --recompute, or lower --micro-batch");
  }
  const double sp = c.sequence_parallel ? c.tp : 1;
  plan.skew = expert_skew(c);
  if (p > 1)
    plan.send =
        fabric.price("pp", "send",
                     whole_bytes(plan.send_bytes = static_cast<double>(c.micro_batch) * c.seq_len / c.cp *
                                                   static_cast<double>(c.model.hidden) * 2 / sp));
  int first = 0;
  for (int j = 0; j < p * v; ++j) {
    plan.chunks.push_back(chunk_cost(c, fabric, first, plan.layers_of_chunk[j], j + 1 == p * v, plan.skew));
    if (c.zero >= 3) {
      const StageWeights w = chunk_params(c, plan.layers_of_chunk, j);
      add_zero3(c, fabric, plan.chunks.back(), w.dense, w.expert);
    }
    ChunkPasses& cost = plan.chunks.back();
    const ExposedComm& fe = cost.forward_exposed;
    const ExposedComm& be = cost.backward_exposed;
    cost.forward = cost.forward_compute + fe.tp + fe.cp + fe.ep + fe.dp;
    cost.backward = cost.backward_compute + be.tp + be.cp + be.ep + be.dp;
    first += plan.layers_of_chunk[j];
  }
  for (int s = 0; s < p; ++s)
    plan.ends.push_back(stage_end(c, fabric, stage_params(c, plan.layers_of_chunk, s), chips));
  return plan;
}

// The step played out: the pipeline, then each stage's end; the slowest stage is the step.
struct TrainTimes {
  PipelineRun pipeline;
  std::vector<double> end, reduce_exposed, gather_exposed;  // per stage
  int critical = 0;                                         // the stage that ends last
  double step = 0;
  double sends_exposed = 0;  // what the pipeline's sends add to its span (played again with free sends)
};

TrainTimes play_step(const TrainConfig& c, const TrainPlan& plan, int chips) {
  const int p = c.pp;
  PipelineCosts costs;
  costs.forward = [&](int r, int chunk) { return plan.chunks[chunk * p + r].forward; };
  costs.backward = [&](int r, int chunk) { return plan.chunks[chunk * p + r].backward; };
  costs.send = [&](int from, int to) { return from == to ? 0.0 : plan.send; };
  TrainTimes t;
  t.pipeline = run_pipeline(plan.order, p, c.micro_batches(chips), c.vp, costs);
  if (p > 1) {
    PipelineCosts free = costs;
    free.send = [](int, int) { return 0.0; };
    t.sends_exposed = t.pipeline.span - run_pipeline(plan.order, p, c.micro_batches(chips), c.vp, free).span;
  }
  for (int s = 0; s < p; ++s) {
    const StageTail& e = plan.ends[s];
    const double reduce =
        c.overlap_grad_reduce ? std::max(0.0, e.reduce - t.pipeline.last_backward[s]) : e.reduce;
    const double gather =
        c.overlap_param_gather ? std::max(0.0, e.gather - t.pipeline.first_forward[s]) : e.gather;
    t.reduce_exposed.push_back(reduce);
    t.gather_exposed.push_back(gather);
    t.end.push_back(t.pipeline.end[s] + reduce + e.optimizer + gather);
    if (t.end.back() > t.step) t.step = t.end.back(), t.critical = s;
  }
  return t;
}

// The critical stage's exposed communication by kind over the step, s.
nlohmann::ordered_json exposed_json(const TrainConfig& c, const TrainPlan& plan, const TrainTimes& t) {
  ExposedComm sum;
  const int s = t.critical, m = static_cast<int>(plan.order[s].size()) / (2 * c.vp);
  for (int chunk = 0; chunk < c.vp; ++chunk) {
    sum += plan.chunks[chunk * c.pp + s].forward_exposed;
    sum += plan.chunks[chunk * c.pp + s].backward_exposed;
  }
  return {{"tp", sum.tp * m},
          {"cp", sum.cp * m},
          {"ep", sum.ep * m},
          {"pp", t.sends_exposed},
          {"dp", sum.dp * m + t.reduce_exposed[s] + t.gather_exposed[s]}};
}

// The critical stage's collectives over the step: their buffers' bytes by kind (the pipeline's sends too).
nlohmann::ordered_json volume_json(const TrainConfig& c, const TrainPlan& plan, const TrainTimes& t,
                                   int chips) {
  ExposedComm sum;
  const int s = t.critical, m = c.micro_batches(chips);
  for (int chunk = 0; chunk < c.vp; ++chunk) sum += plan.chunks[chunk * c.pp + s].volume;
  const double sends = c.pp > 1 ? plan.send_bytes * 2 * m * c.vp : 0;
  return {{"tp", sum.tp * m},
          {"cp", sum.cp * m},
          {"ep", sum.ep * m},
          {"pp", sends},
          {"dp", sum.dp * m + plan.ends[s].volume}};
}

nlohmann::ordered_json memory_json(const TrainMemory& m, double capacity) {
  return {{"weights_bytes", m.weights},     {"gradients_bytes", m.gradients},
          {"optimizer_bytes", m.optimizer}, {"activations_bytes", m.activations},
          {"logits_bytes", m.logits},       {"buffers_bytes", m.buffers},
          {"total_bytes", m.total()},       {"hbm_capacity_bytes", capacity}};
}

nlohmann::ordered_json collectives_json(const TrainFabric& fabric) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const PricedCollective& p : fabric.priced())
    out.push_back({{"kind", p.kind},
                   {"collective", p.collective},
                   {"algorithm", p.algorithm},
                   {"bytes", p.bytes},
                   {"group_size", p.group_size},
                   {"groups", p.groups},
                   {"time_s", p.seconds},
                   {"engine", p.engine}});
  return out;
}

nlohmann::ordered_json layout_json(const TrainConfig& c, int chips) {
  return {{"tp", c.tp},
          {"cp", c.cp},
          {"pp", c.pp},
          {"dp", c.dp(chips)},
          {"ep", c.ep},
          {"etp", c.etp},
          {"edp", c.edp(chips)},
          {"vp", c.vp},
          {"schedule", c.schedule},
          {"zero", c.zero},
          {"sequence_parallel", c.sequence_parallel},
          {"micro_batch", c.micro_batch},
          {"global_batch", c.global_batch},
          {"micro_batches", c.micro_batches(chips)},
          {"seq_len", c.seq_len},
          {"precision", c.precision},
          {"recompute", c.recompute}};
}

nlohmann::ordered_json train_json(const TrainRequest& request, TrainFabric& fabric, const TrainPlan& plan,
                                  const TrainTimes& t) {
  const TrainConfig& c = request.config;
  const int chips = fabric.machine().p();
  const ChipParams chip = chip_of(fabric.params());
  const double tokens = static_cast<double>(c.global_batch) * c.seq_len;
  const double model_flops = model_flops_per_token(c) * tokens;
  double chip_model = 0, chip_hardware = 0;
  for (const ChunkPasses& k : plan.chunks) chip_model += k.model_flops, chip_hardware += k.hardware_flops;
  const double peak = fabric.chip().peak(precision_dtype(c.precision));
  const double mfu = model_flops / (t.step * chips * peak);
  nlohmann::ordered_json out;
  out["command"] = request.command;
  out["workload"] = "train";
  out["topology"] = c.topology;
  out["chips"] = chips;
  out["model"] = c.model.name;
  out["chip"] = fabric.profile().name;
  out["layout"] = layout_json(c, chips);
  out["step_time_s"] = t.step;
  out["tokens_per_step"] = tokens;
  out["tokens_per_s"] = tokens / t.step;
  out["tokens_per_s_per_chip"] = tokens / t.step / chips;
  out["model_flops_per_step"] = model_flops;
  out["model_tflops_per_chip"] = model_flops / t.step / chips / 1e12;
  out["peak_flops"] = peak;
  out["mfu"] = mfu;
  out["hfu"] = chip_model > 0 ? mfu * chip_hardware / chip_model : mfu;
  out["bubble_fraction"] = t.pipeline.bubble();
  out["critical_stage"] = t.critical;
  out["compute_s"] = t.pipeline.busy[t.critical];
  out["optimizer_s"] = plan.ends[t.critical].optimizer;
  out["exposed_comm_s"] = exposed_json(c, plan, t);
  out["comm_volume_bytes"] = volume_json(c, plan, t, chips);
  out["expert_skew"] = {{"compute", plan.skew.compute}, {"exchange", plan.skew.exchange}};
  const double capacity = serving_chip_table().read(fabric.params()).hbm_capacity;
  nlohmann::ordered_json memory = nlohmann::ordered_json::array();
  for (const TrainMemory& m : plan.memory) memory.push_back(memory_json(m, capacity));
  out["memory_per_chip"] = memory;
  out["collectives"] = collectives_json(fabric);
  const double hours = c.train_tokens / (tokens / t.step) / 3600;
  const double energy =
      workload_energy_j(fabric.params(), chips,
                        static_cast<int>(fabric.machine().topology->switches().size()), t.step, 0) *
      chip.pue;
  out["energy_per_step_j"] = energy;
  out["train_tokens"] = c.train_tokens;
  out["time_to_train_days"] = hours / 24;
  out["energy_to_train_mwh"] = energy / t.step * hours * 3600 / 3.6e9;
  out["cost_to_train_usd"] = workload_cost_usd(fabric.params(), chips, hours * 3600);
  out["verified"] = true;
  return out;
}

// The step as a Chrome trace (ui.perfetto.dev): a process per pipeline rank (its first chip), tracks
// "compute" (the passes), "data parallel" (the exposed reduction and gather), "optimizer".
void write_train_trace(const std::string& path, const TrainConfig& c, const TrainPlan& plan,
                       const TrainTimes& t, int chips, const nlohmann::ordered_json& result) {
  OutputFile out(path, "trace");
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  auto event = [&](int pid, int tid, const std::string& name, double start, double end) {
    events.push_back({{"name", name},
                      {"ph", "X"},
                      {"pid", pid},
                      {"tid", tid},
                      {"ts", start * 1e6},
                      {"dur", (end - start) * 1e6}});
  };
  for (int s = 0; s < c.pp; ++s) {
    const int pid = c.rank(0, 0, 0, s, chips);
    events.push_back(
        {{"name", "process_name"},
         {"ph", "M"},
         {"pid", pid},
         {"args", {{"name", "pipeline rank " + std::to_string(s) + " (chip " + std::to_string(pid) + ")"}}}});
    int tid = 0;
    for (const char* track : {"compute", "data parallel", "optimizer"})
      events.push_back(
          {{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid++}, {"args", {{"name", track}}}});
    const auto& order = t.pipeline.order[s];
    for (std::size_t i = 0; i < order.size(); ++i)
      event(pid, 0,
            std::string(order[i].forward ? "F" : "B") + std::to_string(order[i].micro) +
                (c.vp > 1 ? "." + std::to_string(order[i].chunk) : ""),
            t.pipeline.start[s][i], t.pipeline.finish[s][i]);
    double at = t.pipeline.end[s];
    event(pid, 1, "gradient reduction (exposed)", at, at + t.reduce_exposed[s]);
    at += t.reduce_exposed[s];
    event(pid, 2, "optimizer", at, at + plan.ends[s].optimizer);
    at += plan.ends[s].optimizer;
    event(pid, 1, "weight all-gather (exposed)", at, at + t.gather_exposed[s]);
  }
  out << nlohmann::ordered_json{{"traceEvents", events}, {"otherData", result}}.dump() << "\n";
  out.close();
}

nlohmann::ordered_json run_on(TrainRequest request, TrainFabric& fabric) {
  TrainConfig& c = request.config;
  c.model.validate("--model");
  fabric.relayout(c);
  const int chips = fabric.machine().p();
  check_train_layout(c, chips);
  fabric.chip().check_dtype(precision_dtype(c.precision),
                            "--precision " + c.precision + " on " + fabric.profile().name);
  if (!request.trace.empty()) OutputFile(request.trace, "trace");  // a bad path fails before pricing
  const TrainPlan plan = plan_train_step(c, fabric);
  const TrainTimes t = play_step(c, plan, chips);
  nlohmann::ordered_json out = train_json(request, fabric, plan, t);
  if (!request.trace.empty()) write_train_trace(request.trace, c, plan, t, chips, out);
  return out;
}

}  // namespace

nlohmann::ordered_json run_train(TrainRequest request) {
  TrainFabric fabric(request.config);
  return run_on(std::move(request), fabric);
}

struct TrainSession::Impl {
  TrainFabric fabric;
};
TrainSession::TrainSession(const TrainConfig& config)
    : impl_(std::make_unique<Impl>(Impl{TrainFabric(config)})) {}
TrainSession::~TrainSession() = default;
int TrainSession::chips() const {
  return impl_->fabric.machine().p();
}
nlohmann::ordered_json TrainSession::run(TrainRequest request) {
  return run_on(std::move(request), impl_->fabric);
}

std::string train_table(const nlohmann::ordered_json& r) {
  std::ostringstream out;
  const auto& l = r["layout"];
  auto ms = [](double s) { return fixed_text(s * 1e3, 2) + " ms"; };
  out << "# train " << r["model"].get<std::string>() << " on " << r["topology"].get<std::string>() << " ("
      << r["chips"] << " chips, " << r["chip"].get<std::string>() << "): tp " << l["tp"] << " cp " << l["cp"]
      << " pp " << l["pp"] << " dp " << l["dp"] << " ep " << l["ep"] << ", "
      << l["schedule"].get<std::string>()
      << (l["vp"].get<int>() > 1 ? " vp " + std::to_string(l["vp"].get<int>()) : "") << ", "
      << l["micro_batches"] << " micro-batches of " << l["micro_batch"] << " x " << l["seq_len"] << "\n";
  out << "step time         " << ms(r["step_time_s"]) << "\n";
  out << "tokens/s per chip " << fixed_text(r["tokens_per_s_per_chip"].get<double>(), 1) << "\n";
  out << "MFU / HFU         " << fixed_text(100 * r["mfu"].get<double>(), 1) << " % / "
      << fixed_text(100 * r["hfu"].get<double>(), 1) << " % (" << fixed_text(r["model_tflops_per_chip"], 1)
      << " model TFLOP/s per chip)\n";
  out << "bubble            " << fixed_text(100 * r["bubble_fraction"].get<double>(), 1) << " %\n";
  out << "exposed comm     ";
  for (const auto& [kind, s] : r["exposed_comm_s"].items()) out << " " << kind << " " << ms(s);
  out << "\n";
  double most = 0;
  for (const auto& m : r["memory_per_chip"]) most = std::max(most, m["total_bytes"].get<double>());
  out << "memory per chip   " << fixed_text(most / (1ull << 30), 1) << " GiB of "
      << fixed_text(r["memory_per_chip"][0]["hbm_capacity_bytes"].get<double>() / (1ull << 30), 1)
      << " GiB\n";
  out << "to train " << shortest_number(r["train_tokens"].get<double>())
      << " tokens: " << fixed_text(r["time_to_train_days"].get<double>(), 1) << " days, "
      << fixed_text(r["energy_to_train_mwh"].get<double>(), 0) << " MWh, "
      << fixed_text(r["cost_to_train_usd"].get<double>() / 1e6, 2) << " M USD\n";
  return out.str();
}

TrainConfig train_config_from_json(const nlohmann::json& w, const std::string& file) {
  const std::string where = "workload file '" + file + "'";
  TrainConfig c;
  read_options(train_options(), w, where, {"workload", "description", "set"}, c);
  c.overrides = set_overrides(w, where);
  return c;
}

WorkloadKind train_workload() {
  return {"train",
          "a training step from a model and a parallel layout (ultrasim train)",
          "train",
          {"step_time_s", "tokens_per_s_per_chip", "mfu", "bubble_fraction", "time_to_train_days",
           "cost_to_train_usd"},
          {"table", "json"},
          [](const nlohmann::json& w, const std::string& file) { train_config_from_json(w, file); },
          [](const nlohmann::json& w, const std::string& file, const WorkloadOutput& output) {
            return print_workload_result(
                run_train({train_config_from_json(w, file), output.command, output.trace}), output.format,
                train_table);
          },
          train_table};
}

}  // namespace ultrasim
