// train's options, declared once (topology/base/options.hpp), and the layout's checks.
#include "workloads/training/train_config.hpp"

#include "sim/engines/records.hpp"  // engine_option
#include "workloads/serving/model_options.hpp"
#include "workloads/training/pipeline_schedule.hpp"

namespace ultrasim {
namespace {

using Train = TrainConfig;

void add_parallel_options(OptionTable<Train>& t) {
  const std::string megatron = "Megatron-LM's default";
  t.push_back(integer_option("tp", &Train::tp, 1, 4096, "tensor-parallel size (--tensor-model-parallel-size)",
                             megatron));
  t.push_back(integer_option("cp", &Train::cp, 1, 4096, "context-parallel size: the sequence split cp ways",
                             megatron));
  t.push_back(integer_option("pp", &Train::pp, 1, 4096, "pipeline stages (--pipeline-model-parallel-size)",
                             megatron));
  t.push_back(integer_option("ep", &Train::ep, 1, 4096,
                             "expert-parallel size: the routed experts split over ep ranks of a stage",
                             megatron));
  t.push_back(
      integer_option("etp", &Train::etp, 1, 4096, "expert tensor-parallel size: each expert split etp ways",
                     "Megatron-Core --expert-tensor-parallel-size (Megatron-Bridge's MoE recipes: 1)"));
  t.push_back(integer_option("vp", &Train::vp, 1, 64,
                             "virtual stages per pipeline rank (the interleaved schedule)", megatron));
  std::vector<std::string> schedules;
  for (const auto& s : pipeline_schedules()) schedules.push_back(s.name);
  t.push_back(text_option("schedule", &Train::schedule, schedules,
                          "pipeline schedule (ultrasim list schedules)", "Megatron-LM: 1f1b"));
  t.push_back(integer_option("zero", &Train::zero, 0, 3,
                             "ZeRO stage: 0 all-reduce, 1 distributed optimizer (optimizer states sharded), "
                             "2 + gradients, 3 + weights (FSDP)",
                             "Megatron-LM --use-distributed-optimizer (NeMo's default)"));
  t.push_back(bool_option("sequence_parallel", &Train::sequence_parallel,
                          "sequence parallelism: the tp all-reduces become reduce-scatters and all-gathers, "
                          "activations split tp-way",
                          "NeMo's default"));
}

void add_batch_options(OptionTable<Train>& t) {
  t.push_back(integer_option("micro_batch", &Train::micro_batch, 1, 1 << 16, "sequences per micro-batch",
                             "Megatron-LM --micro-batch-size"));
  Option<Train> global = integer_option("global_batch", &Train::global_batch, 0, 1 << 24,
                                        "sequences per step (0: dp x micro-batch x 4 pp)", "assumption");
  t.push_back(global);
  t.push_back(integer_option("seq_len", &Train::seq_len, 1, 1 << 22, "tokens per sequence", "assumption"));
  t.push_back(text_option("precision", &Train::precision, {"bf16", "fp8", "mxfp8", "fp4"},
                          "the GEMMs' inputs (Transformer Engine); attention and the rest stay bf16",
                          "assumption"));
  t.push_back(text_option("recompute", &Train::recompute, {"none", "selective", "full"},
                          "activation recompute: selective recomputes the attention core, full every layer",
                          "Megatron-LM --recompute-granularity"));
  t.push_back(text_option("grad_reduce_dtype", &Train::grad_reduce_dtype, {"float32", "bfloat16"},
                          "the gradients' element in the data-parallel reduction",
                          "Megatron-LM: float32 main gradients"));
  t.push_back(number_option("train_tokens", &Train::train_tokens, 1, 1e18,
                            "tokens to train on, for the time, energy and cost to train",
                            "assumption: 1e12"));
}

void add_overlap_options(OptionTable<Train>& t) {
  t.push_back(bool_option("overlap_grad_reduce", &Train::overlap_grad_reduce,
                          "the gradient reduction overlaps the last micro-batch's backward",
                          "Megatron-LM --overlap-grad-reduce (NeMo's default)"));
  t.push_back(bool_option("overlap_param_gather", &Train::overlap_param_gather,
                          "the weights' all-gather overlaps the first micro-batch's forward",
                          "Megatron-LM --overlap-param-gather (NeMo's default)"));
  t.push_back(bool_option("tp_comm_overlap", &Train::tp_comm_overlap,
                          "tp communication overlaps the GEMMs (taking comm_share of the chip)",
                          "Transformer Engine userbuffers (NeMo --tp-comm-overlap)"));
  t.push_back(bool_option("ep_overlap", &Train::ep_overlap,
                          "the expert all-to-alls overlap compute (taking comm_share of the chip)",
                          "Megatron-LM --overlap-moe-expert-parallel-comm"));
  t.push_back(text_option("dp_algorithm", &Train::dp_algorithm, {},
                          "data-parallel collectives' algorithm: auto = hierarchical when a group spans "
                          "scale-up domains, else ring",
                          "NCCL: rings inside a node, then across"));
  t.push_back(text_option("tp_algorithm", &Train::tp_algorithm, {}, "tensor-parallel collectives' algorithm",
                          "NCCL: ring"));
  t.push_back(
      text_option("router", &Train::router, {"uniform", "random"},
                  "the experts' routing of a micro-batch: uniform (each expert its expected share) or "
                  "random (tokens drawn by popularity); the busiest expert rank sets the pace",
                  "assumption"));
  Option<Train> zipf =
      number_option("zipf", &Train::zipf, 0, 100, "expert popularity exponent s", "the model's");
  zipf.unset = "the model's expert_zipf";
  t.push_back(zipf);
  Option<Train> seed{"seed", "integer >= 0", "random seed of the router's draws", "assumption"};
  seed.set = [](Train& c, const nlohmann::json& v, const std::string& where) {
    c.seed = option_seed(v, where);
  };
  seed.value = [](const Train& c) { return nlohmann::json(c.seed); };
  t.push_back(seed);
}

}  // namespace

const OptionTable<TrainConfig>& train_options() {
  static const OptionTable<Train> table = [] {
    OptionTable<Train> t;
    t.push_back(text_option("topology", &Train::topology, {}, "topology spec (ultrasim list topologies)",
                            "assumption"));
    add_model_options(t, "llama3-70b", "Meta Llama 3 (the default)");
    t.push_back(text_option("chip", &Train::chip, {},
                            "the chip profile: auto (by topology) | a name (ultrasim list chips) | FILE.json",
                            "workloads/serving/chips.cpp, per value"));
    add_parallel_options(t);
    add_batch_options(t);
    add_overlap_options(t);
    t.push_back(engine_option<Train>(
        &Train::engine, "contention-free where it proves exact, else fast (each collective once)"));
    return t;
  }();
  return table;
}

void check_train_layout(TrainConfig& c, int chips) {
  const int model_ranks = c.tp * c.cp * c.pp;
  if (chips % model_ranks != 0)
    throw InputError("--tp " + std::to_string(c.tp) + " x --cp " + std::to_string(c.cp) + " x --pp " +
                     std::to_string(c.pp) + " = " + std::to_string(model_ranks) + " does not divide the " +
                     std::to_string(chips) + " chips of " + c.topology);
  const int dp = c.dp(chips);
  if ((c.tp * c.cp * dp) % (c.ep * c.etp) != 0)
    throw InputError("--ep " + std::to_string(c.ep) + " x --etp " + std::to_string(c.etp) +
                     " does not divide the " + std::to_string(c.tp * c.cp * dp) +
                     " ranks of a pipeline stage (tp x cp x dp)");
  if (c.ep > 1 && !c.model.moe())
    throw InputError("--ep and --etp apply to MoE models; " + c.model.name + " is dense");
  if (c.model.moe() && c.model.experts % c.ep != 0)
    throw InputError("--ep " + std::to_string(c.ep) + " does not divide the " +
                     std::to_string(c.model.experts) + " routed experts");
  const PipelineSchedule& schedule = find_schedule(c.schedule);
  if (c.vp > 1 && !schedule.virtual_stages)
    throw InputError("--vp " + std::to_string(c.vp) + " needs --schedule interleaved");
  if (c.model.layers < c.pp * c.vp)
    throw InputError(std::to_string(c.model.layers) +
                     " layers cannot fill pp x vp = " + std::to_string(c.pp * c.vp) + " pipeline chunks");
  if (c.seq_len % (2 * c.cp) != 0 && c.cp > 1)
    throw InputError("--seq-len " + std::to_string(c.seq_len) + " must be a multiple of 2 cp (" +
                     std::to_string(2 * c.cp) + ") for load-balanced context parallelism");
  if (c.model.heads % c.tp != 0)
    throw InputError("--tp " + std::to_string(c.tp) + " does not divide the " +
                     std::to_string(c.model.heads) + " attention heads");
  if (c.global_batch == 0) c.global_batch = dp * c.micro_batch * 4 * c.pp;
  if (c.global_batch % (c.micro_batch * dp) != 0)
    throw InputError("--global-batch " + std::to_string(c.global_batch) +
                     " is not a multiple of micro-batch x dp = " + std::to_string(c.micro_batch * dp));
  // Each pass is played out and kept (start, end): bound them before anything is built.
  const double passes = static_cast<double>(c.micro_batches(chips)) * c.vp * c.pp;
  if (passes > kMaxPipelinePasses)
    throw InputError(
        "--global-batch " + std::to_string(c.global_batch) + " makes " +
        std::to_string(c.micro_batches(chips)) + " micro-batches x pp " + std::to_string(c.pp) + " x vp " +
        std::to_string(c.vp) + " = " + shortest_number(passes) +
        " pipeline passes, over the limit of 4194304; raise --micro-batch or lower --global-batch");
  schedule.check(c.pp, c.micro_batches(chips), c.vp);
}

}  // namespace ultrasim
