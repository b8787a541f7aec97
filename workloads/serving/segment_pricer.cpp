#include "workloads/serving/segment_pricer.hpp"

#include <algorithm>

#include "sim/analysis/link_stats.hpp"
#include "sim/engines/engines.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"  // json_text
#include "topology/base/units.hpp"
#include "workloads/collective/collective_program.hpp"
#include "workloads/collective/collective_run.hpp"  // simulate() of a PreparedJob
#include "workloads/moe/moe_layer.hpp"
#include "workloads/serving/step_predictor.hpp"
#include "workloads/workload_metrics.hpp"

namespace ultrasim {
namespace {

// The resource a communication was bound by: the tier of its busiest link direction when that
// direction's bytes at its rate take at least half the time, else latency.
std::string comm_bound_of(const Machine& m, const SimResult& r, double seconds, double& link_bytes) {
  const auto& links = m.topology->links();
  const std::vector<std::uint64_t> carried =
      direction_bytes(RecordPaths(*m.routes, m.faults), r.transfer_records, links.size());
  double busiest = 0;
  int at = -1;
  for (std::size_t d = 0; d < carried.size(); ++d) {
    link_bytes += static_cast<double>(carried[d]);
    const double t = static_cast<double>(carried[d]) / links[d / 2].bandwidth();
    if (t > busiest) busiest = t, at = static_cast<int>(d / 2);
  }
  if (at < 0 || busiest < 0.5 * seconds) return "latency";
  return "link:" + links[at].tier;
}

// A transfer-only program: rows[i][j] bytes from chip i to chip j, no compute.
MoeLayer transfers_of(const std::vector<std::vector<std::uint64_t>>& rows) {
  const std::size_t p = rows.size();
  const TrafficMatrix zero(std::vector<std::vector<std::uint64_t>>(p, std::vector<std::uint64_t>(p, 0)));
  return MoeLayer(std::vector<std::vector<double>>(p, std::vector<double>(1, 0.0)), TrafficMatrix(rows),
                  zero);
}

}  // namespace

SegmentPricer::SegmentPricer(const ServingConfig& config, std::unique_ptr<Machine> machine)
    : config_(config),
      engine_(parse_engine(config.engine)),
      profile_(chip_profile(config.chip, config.topology)) {
  if (!config_.weight_dtype.empty()) config_.model.weight_dtype = config_.weight_dtype;
  if (!config_.kv_dtype.empty()) config_.model.kv_dtype = config_.kv_dtype;
  if (engine_ == Engine::kSimGrid)
    throw InputError(
        "--engine simgrid: serve runs many simulations in one process and SimGrid runs one; "
        "use auto, fast, flow or contention-free");
  ParamSet chip(serving_params());
  topology_overrides_ = chip.apply_known(config.overrides);
  chip_names_ = chip.names();
  full_ =
      machine
          ? std::move(machine)
          : std::make_unique<Machine>(build_machine(config.topology, topology_overrides_, chip_names_, true));
  std::vector<std::pair<std::string, std::string>> values;
  for (const ChipValue& v : profile_.values) values.emplace_back(v.name, v.value);
  values.insert(values.end(), config.overrides.begin(), config.overrides.end());
  params_ = with_params(full_->topology->params(), serving_params(), values);
  chip_ = std::make_unique<ChipModel>(params_);
  chip_->check_dtype(config_.model.weight_dtype, "the model's weight_dtype on " + profile_.name);
  chip_->check_dtype(config_.model.activation_dtype, "the model's activation_dtype on " + profile_.name);
  layout_ = serving_layout(config, full_->p());
  if (layout_.pp > 1 && config.topology.find('@') != std::string::npos)
    throw InputError("--pp splits the topology's chips into stages: give a topology without @CHIPS");
  stages_.resize(layout_.pp);
}

SegmentPricer::~SegmentPricer() = default;

Machine& SegmentPricer::stage(int s) {
  if (layout_.pp == 1) return *full_;
  if (!stages_[s]) {
    const int S = layout_.stage_chips();
    stages_[s] = std::make_unique<Machine>(select_chips(*full_, s * S, (s + 1) * S - 1, true));
  }
  return *stages_[s];
}

SegmentTime SegmentPricer::price(const Segment& seg, bool overlap) {
  switch (seg.kind) {
    case Segment::kCompute:
      return compute(seg);
    case Segment::kAllreduce:
      return allreduce(seg);
    case Segment::kMoe:
      return predictor_ ? predictor_->price(seg.stage, seg.moe.chip_tokens) : moe(seg, overlap);
    case Segment::kSend:
      return send(seg);
  }
  return {};
}

void SegmentPricer::prefetch(const std::vector<StepPlan>& plans) {
  if (!tracing_ && !predictor_) prefetch_moe(plans);
}

void SegmentPricer::prefetch_moe(const std::vector<StepPlan>& plans) {
  const bool overlap = plans.size() == 2;
  std::vector<const Segment*> pending;
  std::vector<std::string> keys;
  for (const auto& plan : plans)
    for (const auto& seg : plan.segments) {
      if (seg.kind != Segment::kMoe) continue;
      const std::string key = moe_key(seg, overlap);
      if (moe_cache_.count(key) || std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
      pending.push_back(&seg), keys.push_back(key);
    }
  if (pending.size() < 2 || child_jobs() < 2) return;
  // Every pair's paths once, here: the children inherit them instead of each finding them again.
  for (int s = 0; s < layout_.pp; ++s) {
    const Machine& m = stage(s);
    for (int a = 0; a < m.p(); ++a)
      for (int b = 0; b < m.p(); ++b)
        if (a != b) m.routes->message_paths(a, b), m.routes->route_latency(a, b);
  }
  // A layer that fails in its child runs again here: its own error (an unreachable chip, ...) is reported.
  const auto values = run_in_children(
      pending.size(),
      [&](std::size_t i) { return encode_segment(moe(*pending[i], overlap), full_->topology->tiers()); },
      [&](std::size_t i) {
        moe(*pending[i], overlap);
        throw SimulationError("serving: the MoE layer " + std::to_string(pending[i]->layer) +
                              " failed to simulate in a child process");
      });
  for (std::size_t i = 0; i < pending.size(); ++i) moe_cache_.emplace(keys[i], decode(values[i]));
}

EngineCheck SegmentPricer::check_engine(const std::vector<StepPlan>& plans, int n) {
  EngineCheck check;
  const bool overlap = plans.size() == 2;
  for (const auto& seg : plans.front().segments) {
    if (check.exchanges >= n) break;
    const std::string what = seg.what + " of layer " + std::to_string(seg.layer);
    if (seg.kind == Segment::kMoe) {
      Machine& m = stage(seg.stage);
      const std::unique_ptr<MoeLayer> layer =
          make_moe_layer(route_tokens(seg.moe, m.p(), 0), seg.moe, params_, !overlap);
      check.add(what, m, *layer);
    } else if (seg.kind == Segment::kAllreduce) {
      PreparedJob prepared = prepare(tp_job(seg));
      CollectiveProgram program(prepared);
      try {
        check.add(what, prepared, program);
      } catch (const SimulationError&) {  // what only SimGrid models (in-switch reduction): not an exchange
      }                                   // either engine runs
    }
  }
  return check;
}

void SegmentPricer::use_predictor(int sample_layers, const std::string& cache_dir) {
  sample_layers_ = sample_layers;
  const std::vector<std::string> tiers = full_->topology->tiers();
  predictor_ = std::make_unique<StepTimePredictor>(
      layout_.stage_chips(),
      [this](int stage, std::uint64_t m, std::uint64_t T) { return predictor_point(stage, m, T); },
      [tiers](const SegmentTime& t) { return encode_segment(t, tiers); },
      [this](const std::vector<double>& v) { return decode(v); }, cache_dir,
      cache_dir.empty() ? "" : predictor_description(sample_layers));
}

std::size_t SegmentPricer::predicted_points() const {
  return predictor_ ? predictor_->points() : 0;
}

// The mean MoE layer of stage `stage` with T tokens packed on as few chips as hold them at m each
// (T / m chips at m, one with the rest, spread evenly over the stage), over sample_layers_ of its MoE
// layers spread evenly, each simulated as the exact plan would simulate it.
SegmentTime SegmentPricer::predictor_point(int stage, std::uint64_t m, std::uint64_t T) {
  const int S = layout_.stage_chips();
  std::vector<std::uint64_t> chip_tokens(static_cast<std::size_t>(S), 0);
  const std::uint64_t full = T / m, rest = T % m, busy = full + (rest > 0 ? 1 : 0);
  for (std::uint64_t i = 0; i < busy; ++i)
    chip_tokens[static_cast<std::size_t>(i * static_cast<std::uint64_t>(S) / busy)] = i < full ? m : rest;
  const ModelShape& model = config_.model;
  const int per_stage = model.layers / layout_.pp;
  std::vector<int> layers;
  for (int l = stage * per_stage; l < (stage + 1) * per_stage; ++l)
    if (model.is_moe_layer(l)) layers.push_back(l);
  if (layers.empty()) layers.push_back(model.layers);  // a draft's MoE layer
  const int k = std::min<int>(sample_layers_, static_cast<int>(layers.size()));
  StepPlan sample;
  for (int i = 0; i < k; ++i) {
    Segment& s = sample.segments.emplace_back();
    s.kind = Segment::kMoe, s.stage = stage, s.what = "moe";
    s.layer = layers[static_cast<std::size_t>((2 * i + 1) * static_cast<int>(layers.size()) / (2 * k))];
    s.moe = moe_layer_config(config_, chip_tokens, s.layer, 0);
  }
  prefetch_moe({sample});  // the sample's layers exactly
  SegmentTime mean;
  for (const Segment& s : sample.segments) {
    const SegmentTime t = moe(s, false);
    if (&s == &sample.segments.front())
      mean.bound = t.bound, mean.comm_bound = t.comm_bound, mean.engine = t.engine;
    mean.seconds += t.seconds / k, mean.compute_s += t.compute_s / k, mean.fixed_s += t.fixed_s / k;
    mean.comm_s += t.comm_s / k, mean.flops += t.flops / k, mean.bytes += t.bytes / k;
    mean.link_bytes += t.link_bytes / k, mean.transfers += t.transfers, mean.wrong += t.wrong;
    mean.tabled |= t.tabled, mean.fell_back |= t.fell_back;
    if (t.wrong > 0 && mean.first_error.empty()) mean.first_error = t.first_error;
  }
  mean.transfers /= static_cast<std::uint64_t>(std::max(k, 1));
  return mean;
}

// What the predictor's points depend on besides (stage, m, T): the fabric, the model, the routing, the
// chip profile, the engine, the sample and the stages.
std::string SegmentPricer::predictor_description(int sample_layers) const {
  const ServingConfig& c = config_;
  std::string key = c.topology + "|" + json_text(model_json(c.model)) + "|" + c.router + "|" +
                    shortest_number(c.zipf.value_or(-1)) + "|" + c.expert_load_source + "|" +
                    shortest_number(c.capacity_factor.value_or(-1)) + "|" + c.dispatch_dtype + "|" +
                    c.combine_dtype + "|" + c.placement + "|" + std::to_string(c.replicate_hot) + "|" +
                    std::to_string(c.replicas) + "|" + std::to_string(c.max_nodes) + "|" +
                    std::to_string(c.node_chips) + "|" + std::to_string(c.seed) + "|" + c.engine + "|" +
                    profile_.name + "|" + profile_.file + "|" + std::to_string(sample_layers) + "|" +
                    std::to_string(layout_.pp) + "|tables " + chip_->tables().fingerprint();
  for (const ChipValue& v : profile_.values) key += "|" + v.name + "=" + v.value;
  for (const auto& [k, v] : c.overrides) key += "|" + k + "=" + v;
  return key;
}

SegmentTime SegmentPricer::exchange(const std::vector<std::vector<std::uint64_t>>& rows) {
  MoeLayer layer = transfers_of(rows);
  return alone(*full_, layer);
}

SegmentTime SegmentPricer::send(const Segment& seg) {
  const int p = full_->p(), S = layout_.stage_chips();
  std::vector<std::vector<std::uint64_t>> rows(p, std::vector<std::uint64_t>(p, 0));
  for (int c = 0; c < S; ++c) rows[seg.stage * S + c][(seg.stage + 1) * S + c] = seg.chip_bytes[c];
  MoeLayer layer = transfers_of(rows);
  return alone(*full_, layer);
}

SegmentTime SegmentPricer::alone(const Machine& m, Program& program) {
  const SimResult r = simulate_here(m, program);
  SegmentTime t;
  if (tracing_) t.run = std::make_shared<SimResult>(r);
  t.seconds = t.comm_s = r.time_s;
  t.transfers = r.transfers;
  t.wrong = r.verdict.wrong, t.first_error = r.verdict.first_error;
  t.comm_bound = comm_bound_of(m, r, r.time_s, t.link_bytes);
  return t;
}

// Into the trace: the segment's records from `at` on, its chips renamed to the whole fabric's ranks.
void SegmentPricer::record(const Segment& seg, const SegmentTime& t, double at) {
  const int offset = seg.kind == Segment::kSend ? 0 : seg.stage * layout_.stage_chips();
  if (seg.kind == Segment::kCompute) {
    for (std::size_t c = 0; c < seg.chips.size(); ++c)
      if (const double s = chip_->time(seg.chips[c]).seconds(); s > 0)
        tracing_->compute_records.push_back({static_cast<int>(c) + offset, seg.what, at, at + s});
    return;
  }
  if (!t.run) return;  // simulated in a child (SimGrid): its time only
  for (auto x : t.run->transfer_records) {
    x.start += at, x.end += at, x.wire_end += at;
    if (x.src >= 0) x.src += offset;
    if (x.dst >= 0) x.dst += offset;
    x.step = seg.layer;
    tracing_->transfer_records.push_back(x);
  }
  for (auto x : t.run->compute_records) {
    x.start += at, x.end += at, x.chip += offset;
    x.what = seg.what + " " + x.what;
    tracing_->compute_records.push_back(x);
  }
  tracing_->transfers += t.run->transfers;
}

SegmentTime SegmentPricer::compute(const Segment& seg) const {
  SegmentTime t;
  ChipTime busiest;
  for (const ChipWork& w : seg.chips) {
    const ChipTime c = chip_->time(w);
    if (c.seconds() > t.seconds) t.seconds = c.seconds(), busiest = c;
    t.tabled |= c.tabled, t.fell_back |= c.fell_back;
    t.flops += w.flops(), t.bytes += w.bytes;
  }
  t.compute_s = t.seconds, t.fixed_s = busiest.fixed_s;
  t.bound = busiest.memory_bound() ? "hbm" : "compute";
  return t;
}

// Simulates `program` on `m` in this process, records kept: on the engine asked for; with auto, the
// contention-free engine where it proves exact, else the fast engine (SimGrid runs once per process).
SimResult SegmentPricer::simulate_here(const Machine& m, Program& program) {
  RunOptions options;
  options.record = true;
  options.engine = engine_;
  options.contended = Engine::kFast;
  options.simgrid_fallback = false;
  const SimResult r = simulate(m, program, options);
  note_engine(r.engine);
  return r;
}

// The tp all-reduce of a segment as `ultrasim run --groups tp` runs it, on the stage's chips.
CollectiveJob SegmentPricer::tp_job(const Segment& seg) {
  CollectiveJob job;
  job.topology = stage(seg.stage).topology->spec();
  job.collective = "allreduce";
  job.algorithm = config_.allreduce;
  job.bytes = seg.bytes;
  job.dtype = config_.model.activation_dtype;
  job.overrides = topology_overrides_;
  job.groups = "tp";
  job.layout = "tp=" + std::to_string(layout_.tp) + ",dp=" + std::to_string(layout_.dp);
  return job;
}

SegmentTime SegmentPricer::allreduce(const Segment& seg) {
  const auto key = std::make_pair(seg.stage, seg.bytes);
  if (const auto it = allreduce_cache_.find(key); it != allreduce_cache_.end()) return it->second;
  PreparedJob prepared = prepare(tp_job(seg));
  SegmentTime t;
  CollectiveProgram program(prepared);
  try {
    const SimResult r = simulate_here(prepared, program);
    if (tracing_) t.run = std::make_shared<SimResult>(r);
    t.seconds = r.time_s;
    t.transfers = r.transfers;
    t.wrong = r.verdict.wrong, t.first_error = r.verdict.first_error;
    t.comm_bound = comm_bound_of(prepared, r, r.time_s, t.link_bytes);
  } catch (const SimulationError&) {
    if (engine_ != Engine::kAuto) throw;
    t = allreduce_on_simgrid(seg, prepared);
  }
  t.comm_s = t.seconds;
  allreduce_cache_.emplace(key, t);
  return t;
}

// What only SimGrid models (in-switch reduction): in a child process, the time alone. No records come
// back: bound by links when the fabric's bound is at least half the time, in the highest tier a tp group's
// route crosses.
SegmentTime SegmentPricer::allreduce_on_simgrid(const Segment& seg, const PreparedJob& prepared) {
  SegmentTime t;
  ChildRun child = ChildRun::start([&] {
    RunOptions options;
    const SimResult r = simulate(prepared, options);
    return r.verdict.wrong == 0 ? r.time_s : -1.0;
  });
  const auto time = child.finish();
  if (!time || *time < 0)
    throw SimulationError("the tp all-reduce of " + std::to_string(seg.bytes) + " bytes failed on SimGrid");
  t.seconds = *time;
  note_engine(Engine::kSimGrid);
  if (compute_metrics(prepared, t.seconds).bound_s >= 0.5 * t.seconds) {
    int tier = -1;
    for (const Hop& h : prepared.routes->between(0, layout_.tp - 1).hops)
      if (const auto& l = prepared.topology->links()[h.link]; l.tier_index > tier)
        tier = l.tier_index, t.comm_bound = "link:" + l.tier;
  }
  return t;
}

// The MoE layers that are one simulation: the same stage, tokens and draw (any draw of the uniform router).
std::string SegmentPricer::moe_key(const Segment& seg, bool overlap) const {
  std::string key = std::to_string(seg.stage) + (overlap ? "o" : "") + "/" +
                    (config_.router == "uniform" ? std::string("u") : std::to_string(seg.moe.seed));
  for (const auto n : seg.moe.chip_tokens) key += "," + std::to_string(n);
  return key;
}

SegmentTime SegmentPricer::decode(const std::vector<double>& v) {
  SegmentTime t = decode_segment(v, full_->topology->tiers());
  note_engine(t.engine);
  return t;
}

SegmentTime SegmentPricer::moe(const Segment& seg, bool overlap) {
  const std::string key = moe_key(seg, overlap);
  if (const auto it = moe_cache_.find(key); it != moe_cache_.end()) return it->second;
  Machine& m = stage(seg.stage);
  const int S = m.p();
  const MoeRouting routing = route_tokens(seg.moe, S, 0);
  SegmentTime t;
  ExpertCompute straggler;  // the slowest chip's expert compute
  for (int c = 0; c < S; ++c) {
    const ExpertCompute e = expert_compute(routing, c, seg.moe, params_, 1);
    if (e.seconds > straggler.seconds) straggler = e;
    t.tabled |= e.tabled, t.fell_back |= e.fell_back;
    t.flops += e.flops, t.bytes += e.bytes;
  }
  const double slowest = straggler.seconds;
  t.bound = straggler.memory_bound ? "hbm" : "compute";
  // With overlap the experts are the other stream's: the layer alone is its communication.
  const std::unique_ptr<MoeLayer> layer = make_moe_layer(routing, seg.moe, params_, !overlap);
  const SimResult r = simulate_here(m, *layer);
  if (tracing_) t.run = std::make_shared<SimResult>(r);
  t.transfers = r.transfers, t.engine = r.engine;
  t.wrong = r.verdict.wrong, t.first_error = r.verdict.first_error;
  if (overlap) {
    t.comm_s = r.time_s, t.compute_s = slowest, t.seconds = r.time_s + slowest;
  } else {
    t.seconds = r.time_s, t.compute_s = std::min(slowest, r.time_s), t.comm_s = r.time_s - t.compute_s;
  }
  t.comm_bound = comm_bound_of(m, r, t.comm_s, t.link_bytes);
  moe_cache_.emplace(key, t);
  return t;
}

void SegmentPricer::note_engine(Engine e) {
  used_ = least_exact(used_, e);
}

}  // namespace ultrasim
