#include "sim/runs/serving_run.hpp"

#include "sim/runs/production_run.hpp"

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>
#include <tuple>

#include "collectives/collective.hpp"  // even_chunks
#include "sim/analysis/link_stats.hpp"
#include "sim/analysis/report.hpp"
#include "sim/analysis/trace.hpp"
#include "sim/engine/engines.hpp"
#include "sim/engine/runner.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/progress.hpp"
#include "topology/base/units.hpp"
#include "workloads/chip_model.hpp"
#include "workloads/collective_job.hpp"
#include "workloads/collective_program.hpp"
#include "workloads/moe_layer.hpp"
#include "workloads/workload_metrics.hpp"

namespace ultrasim {
// The serving simulation's parts, named (not anonymous) because ServingStepper holds one.
namespace serving_detail {

// One segment simulated (or computed) alone.
struct SegmentTime {
  double seconds = 0;    // alone
  double compute_s = 0;  // of which compute (an MoE layer's slowest expert compute)
  double fixed_s = 0;    // of the compute, the kernels' fixed costs
  double comm_s = 0;     // of which communication
  std::string bound = "compute", comm_bound = "latency";  // compute: hbm | compute; comm: link:TIER | latency
  double flops = 0, bytes = 0, link_bytes = 0;            // over every chip
  std::uint64_t transfers = 0, wrong = 0;
  std::string first_error;
  Engine engine = Engine::kContentionFree;
  std::shared_ptr<const SimResult> run;  // while tracing: the simulation's records (stage ranks)
};

// A step's time and what it was spent on.
struct StepTime {
  double seconds = 0;
  std::map<std::string, double> bound_s;  // seconds of the step per bounding resource
  std::map<std::string, double> parts_s;  // seconds per kind of segment (each alone)
  std::vector<double> moe_s;              // each MoE layer alone (micro-batch 0's)
  std::uint64_t tp_bytes = 0;             // the tp all-reduces: their size, one's time alone, how many
  double tp_s = 0;
  int tp_count = 0;
  double flops = 0, bytes = 0, link_bytes = 0;
  std::uint64_t transfers = 0, wrong = 0;
  std::string first_error;
};

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

class ServingSim {
 public:
  explicit ServingSim(const ServingConfig& config)
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
    full_ = std::make_unique<Machine>(build_machine(config.topology, topology_overrides_, chip_names_, true));
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

  const ServingConfig& config() const { return config_; }
  const ServingLayout& layout() const { return layout_; }
  const ParamSet& params() const { return params_; }
  const ChipModel& chip() const { return *chip_; }
  const ChipProfile& profile() const { return profile_; }
  Machine& full() { return *full_; }

  // The chips of stage s as a machine of their own (the whole fabric's links, its ranks only).
  Machine& stage(int s) {
    if (layout_.pp == 1) return *full_;
    if (!stages_[s]) {
      const int S = layout_.stage_chips();
      const std::string spec =
          config_.topology + "@" + std::to_string(s * S) + "-" + std::to_string((s + 1) * S - 1);
      stages_[s] = std::make_unique<Machine>(build_machine(spec, topology_overrides_, chip_names_, true));
    }
    return *stages_[s];
  }

  SegmentTime evaluate(const Segment& seg, bool overlap) {
    switch (seg.kind) {
      case Segment::kCompute:
        return compute(seg);
      case Segment::kAllreduce:
        return allreduce(seg);
      case Segment::kMoe:
        return moe(seg, overlap);
      case Segment::kSend:
        return send(seg);
    }
    return {};
  }

  // Simulates the MoE layers of `plans` not simulated yet, each in a child process, as many at once as
  // there are cores (the layers are independent simulations), into the cache.
  void prefetch_moe(const std::vector<StepPlan>& plans) {
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
    const std::size_t jobs = std::max(1u, std::thread::hardware_concurrency());
    if (pending.size() < 2 || jobs < 2) return;
    // Every pair's paths once, here: the children inherit them instead of each finding them again.
    for (int stage = 0; stage < layout_.pp; ++stage) {
      const Machine& m = this->stage(stage);
      for (int a = 0; a < m.p(); ++a)
        for (int b = 0; b < m.p(); ++b)
          if (a != b) m.routes->message_paths(a, b), m.routes->route_latency(a, b);
    }
    std::deque<std::pair<std::size_t, ChildRun>> running;
    auto collect = [&] {
      auto [i, child] = running.front();
      running.pop_front();
      const auto values = child.finish_values();
      if (!values) {  // the layer again, here: its own error (an unreachable chip, ...) is what is reported
        for (auto& other : running) other.second.finish_values();
        running.clear();
        moe(*pending[i], overlap);
        throw SimulationError("serving: the MoE layer " + std::to_string(pending[i]->layer) +
                              " failed to simulate in a child process");
      }
      moe_cache_.emplace(keys[i], decode(*values));
    };
    for (std::size_t i = 0; i < pending.size(); ++i) {
      if (running.size() >= jobs) collect();
      running.emplace_back(i, ChildRun::start_values([&, i] { return encode(moe(*pending[i], overlap)); }));
    }
    while (!running.empty()) collect();
  }

  // Batch `batch`'s step: one plan, or two micro-batches' (overlap).
  StepTime step(const std::vector<StepPlan>& plans) {
    StepTime out;
    const bool overlap = plans.size() == 2;
    if (!tracing_ && grid_layers_ == 0) prefetch_moe(plans);
    double clock = 0;  // while tracing: where the next segment starts
    const std::size_t n = plans.front().segments.size();
    for (const auto& plan : plans)
      if (plan.segments.size() != n) throw SimulationError("serving: micro-batches with different plans");
    // Per (stage, layer) group of segments: the streams' sums.
    double C = 0, M = 0;
    std::map<std::string, double> c_bound, m_bound;
    // While tracing, a fixed cost shows on every chip of the stage as a segment of its own.
    auto record_fixed = [&](int stage, const std::string& what, double seconds) {
      for (int c = 0; c < layout_.stage_chips(); ++c)
        tracing_->compute_records.push_back(
            {c + stage * layout_.stage_chips(), what, clock, clock + seconds});
      clock += seconds;
    };
    auto close_group = [&](bool overlapped, bool layer, int stage, double repeat) {
      if (layer && chip_->layer_overhead() > 0) {  // each micro-batch's pass through the layer
        C += repeat * chip_->layer_overhead() * static_cast<double>(plans.size());
        c_bound["overhead"] += repeat * chip_->layer_overhead() * static_cast<double>(plans.size());
        if (tracing_) record_fixed(stage, "layer overhead", chip_->layer_overhead());
      }
      // Overlapped: the communication takes comm_share of the chip from the compute beside it.
      const double t = overlapped ? chip_->overlapped_seconds(C, M) : C + M;
      out.seconds += t;
      if (overlapped) {
        const bool compute_bound = t > M;
        auto& stream = compute_bound ? c_bound : m_bound;
        const double sum = compute_bound ? C : M;
        for (const auto& [what, s] : stream) out.bound_s[what] += sum > 0 ? t * s / sum : 0;
      } else {
        for (const auto& [what, s] : c_bound) out.bound_s[what] += s;
        for (const auto& [what, s] : m_bound) out.bound_s[what] += s;
      }
      C = M = 0, c_bound.clear(), m_bound.clear();
    };
    for (std::size_t i = 0; i < n; ++i) {
      const Segment& head = plans.front().segments[i];
      for (const auto& plan : plans) {
        const Segment& seg = plan.segments[i];
        const SegmentTime t = evaluate(seg, overlap);
        const double r = seg.repeat;  // a compact plan's segment stands for r identical ones
        if (tracing_) record(seg, t, clock);
        clock += t.seconds;
        C += r * t.compute_s, M += r * t.comm_s;
        if (t.compute_s > t.fixed_s) c_bound[t.bound] += r * (t.compute_s - t.fixed_s);
        if (t.fixed_s > 0) c_bound["overhead"] += r * t.fixed_s;
        if (t.comm_s > 0) m_bound[t.comm_bound] += r * t.comm_s;
        out.parts_s[seg.what] += r * t.seconds;
        if (seg.kind == Segment::kMoe && seg.micro_batch == 0) out.moe_s.push_back(t.seconds);
        if (seg.kind == Segment::kAllreduce)
          out.tp_bytes = seg.bytes, out.tp_s = t.seconds, out.tp_count += seg.repeat;
        out.flops += r * t.flops, out.bytes += r * t.bytes, out.link_bytes += r * t.link_bytes;
        out.transfers += static_cast<std::uint64_t>(seg.repeat) * t.transfers;
        if (t.wrong > 0 && out.wrong == 0)
          out.first_error = seg.what + " of layer " + std::to_string(seg.layer) + ": " + t.first_error;
        out.wrong += t.wrong;
      }
      const bool last_of_group = i + 1 == n || plans.front().segments[i + 1].layer != head.layer ||
                                 plans.front().segments[i + 1].stage != head.stage;
      if (last_of_group) close_group(overlap && head.layer >= 0, head.layer >= 0, head.stage, head.repeat);
    }
    if (chip_->step_overhead() > 0) {  // the host's part of the step, on its critical path
      out.seconds += chip_->step_overhead(), out.bound_s["overhead"] += chip_->step_overhead();
      if (tracing_) {
        for (int c = 0; c < layout_.chips; ++c)
          tracing_->compute_records.push_back(
              {c, "step overhead (host)", clock, clock + chip_->step_overhead()});
        clock += chip_->step_overhead();
      }
    }
    if (tracing_) tracing_->time_s = out.seconds;
    return out;
  }

  // --check-engine: the first n exchanges (MoE layers, tp all-reduces) of `plans` on the fast and the
  // exact flow engine.
  EngineCheck check_engine(const std::vector<StepPlan>& plans, int n) {
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

  // The step-time model (request arrivals): an MoE segment is priced from its busiest chip's tokens and
  // the stage's total, by bilinear interpolation between simulated counts on a ladder (grid_moe).
  void model_moe(int sample_layers, const std::string& cache_dir) {
    grid_layers_ = sample_layers, grid_cache_ = cache_dir;
  }
  // Simulated points so far.
  std::size_t grid_points() const { return grid_.size(); }

  // Moving rows[i][j] bytes from chip i to chip j of this fabric, alone (prefill-to-decode KV transfers).
  SegmentTime exchange(const std::vector<std::vector<std::uint64_t>>& rows) {
    Machine& m = *full_;
    const int p = m.p();
    const TrafficMatrix zero(std::vector<std::vector<std::uint64_t>>(p, std::vector<std::uint64_t>(p, 0)));
    MoeLayer layer(std::vector<std::vector<double>>(p, std::vector<double>(1, 0.0)), TrafficMatrix(rows),
                   zero);
    const SimResult r = simulate_here(m, layer);
    SegmentTime t;
    t.seconds = t.comm_s = r.time_s;
    t.transfers = r.transfers;
    t.wrong = r.verdict.wrong, t.first_error = r.verdict.first_error;
    t.comm_bound = comm_bound_of(m, r, r.time_s, t.link_bytes);
    return t;
  }

  // The engine the result names: the least exact one any segment ran on (fast, then SimGrid, flow,
  // contention-free), so that a result that used the fast engine anywhere says so.
  Engine engine_used() const { return used_; }

  // Records the next step() (one plan: no overlap) into a run of the whole fabric, for a trace.
  void trace_next_step() { tracing_ = std::make_unique<SimResult>(); }
  std::unique_ptr<SimResult> take_trace() { return std::move(tracing_); }

 private:
  // Into the trace: the segment's records from `at` on, its chips renamed to the whole fabric's ranks.
  void record(const Segment& seg, const SegmentTime& t, double at) {
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

  SegmentTime compute(const Segment& seg) const {
    SegmentTime t;
    ChipTime busiest;
    for (const ChipWork& w : seg.chips) {
      const ChipTime c = chip_->time(w);
      if (c.seconds() > t.seconds) t.seconds = c.seconds(), busiest = c;
      t.flops += w.flops(), t.bytes += w.bytes;
    }
    t.compute_s = t.seconds, t.fixed_s = busiest.fixed_s;
    t.bound = busiest.memory_bound() ? "hbm" : "compute";
    return t;
  }

  // Simulates `program` on `m` in this process, records kept: on the engine asked for; with auto, the
  // contention-free engine where it proves exact, else the fast engine (SimGrid runs once per process).
  SimResult simulate_here(const Machine& m, Program& program) {
    RunOptions options;
    options.record = true;
    options.engine = engine_ == Engine::kAuto ? Engine::kContentionFree : engine_;
    SimResult r;
    try {
      r = simulate(m, program, options);
    } catch (const SimulationError&) {
      if (engine_ != Engine::kAuto) throw;
      options.engine = Engine::kFast;
      r = simulate(m, program, options);
    }
    note_engine(r.engine);
    return r;
  }

  // The tp all-reduce of a segment as `ultrasim run --groups tp` runs it, on the stage's chips.
  CollectiveJob tp_job(const Segment& seg) {
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

  SegmentTime allreduce(const Segment& seg) {
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
      // What only SimGrid models (in-switch reduction): in a child process, the time alone.
      ChildRun child = ChildRun::start([&] {
        RunOptions options;
        const SimResult r = simulate(prepared, options);
        return r.verdict.wrong == 0 ? r.time_s : -1.0;
      });
      const auto time = child.finish();
      if (!time || *time < 0)
        throw SimulationError("the tp all-reduce of " + std::to_string(seg.bytes) +
                              " bytes failed on SimGrid");
      t.seconds = *time;
      note_engine(Engine::kSimGrid);
      // No records from the child: bound by links when the fabric's bound is at least half the time,
      // in the highest tier a tp group's route crosses.
      if (compute_metrics(prepared, t.seconds).bound_s >= 0.5 * t.seconds) {
        int tier = -1;
        for (const Hop& h : prepared.routes->between(0, layout_.tp - 1).hops)
          if (const auto& l = prepared.topology->links()[h.link]; l.tier_index > tier)
            tier = l.tier_index, t.comm_bound = "link:" + l.tier;
      }
    }
    t.comm_s = t.seconds;
    allreduce_cache_.emplace(key, t);
    return t;
  }

  // The MoE layers that are one simulation: the same stage, tokens and draw (any draw of the uniform router).
  std::string moe_key(const Segment& seg, bool overlap) const {
    std::string key = std::to_string(seg.stage) + (overlap ? "o" : "") + "/" +
                      (config_.router == "uniform" ? std::string("u") : std::to_string(seg.moe.seed));
    for (const auto n : seg.moe.chip_tokens) key += "," + std::to_string(n);
    return key;
  }

  // A segment's time as numbers (a child's answer) and back; the tier as its index in the topology's.
  std::vector<double> encode(const SegmentTime& t) const {
    const auto& tiers = full_->topology->tiers();
    double tier = -1;
    for (std::size_t i = 0; i < tiers.size(); ++i)
      if (t.comm_bound == "link:" + tiers[i]) tier = static_cast<double>(i);
    return {t.seconds,
            t.compute_s,
            t.comm_s,
            t.flops,
            t.bytes,
            t.link_bytes,
            static_cast<double>(t.transfers),
            static_cast<double>(t.wrong),
            t.bound == "hbm" ? 1.0 : 0.0,
            tier,
            static_cast<double>(t.engine)};
  }
  SegmentTime decode(const std::vector<double>& v) {
    if (v.size() != 11) throw SimulationError("serving: a child's answer is malformed");
    SegmentTime t;
    t.seconds = v[0], t.compute_s = v[1], t.comm_s = v[2], t.flops = v[3], t.bytes = v[4],
    t.link_bytes = v[5];
    t.transfers = static_cast<std::uint64_t>(v[6]), t.wrong = static_cast<std::uint64_t>(v[7]);
    t.bound = v[8] > 0 ? "hbm" : "compute";
    t.comm_bound =
        v[9] < 0 ? "latency" : "link:" + full_->topology->tiers().at(static_cast<std::size_t>(v[9]));
    t.engine = static_cast<Engine>(static_cast<int>(v[10]));
    if (t.wrong > 0) t.first_error = "the layer's all-to-allv did not verify";
    note_engine(t.engine);
    return t;
  }

  SegmentTime moe(const Segment& seg, bool overlap) {
    if (grid_layers_ > 0) return grid_moe(seg);
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

  // The ladder of simulated token counts: 1, 2, 3, 4, 6, 8, 12, 16, ... (steps of 4/3 and 3/2).
  static std::uint64_t ladder_next(std::uint64_t n) {
    return n < 2 ? 2 : (n & (n - 1)) == 0 ? n / 2 * 3 : n / 3 * 4;
  }
  static std::pair<std::uint64_t, std::uint64_t> bracket(std::uint64_t n) {
    std::uint64_t lo = 1, hi = 1;
    while (hi < n) lo = hi, hi = ladder_next(hi);
    return {hi == n ? n : lo, hi};
  }

  // An MoE segment from its busiest chip's tokens m and the stage's total T: bilinear between the
  // simulated points at the ladder's counts around them (grid_point).
  SegmentTime grid_moe(const Segment& seg) {
    std::uint64_t m = 1, T = 0;
    for (const auto n : seg.moe.chip_tokens) m = std::max(m, n), T += n;
    T = std::max(T, m);
    const auto S = static_cast<std::uint64_t>(layout_.stage_chips());
    const auto [m0, m1] = bracket(m);
    const auto [t0, t1] = bracket(T);
    auto at = [&](std::uint64_t mm, std::uint64_t tt) {
      return grid_point(seg.stage, mm, std::clamp(tt, mm, mm * S));
    };
    const double u = m1 == m0 ? 0 : static_cast<double>(m - m0) / static_cast<double>(m1 - m0);
    const double v = t1 == t0 ? 0 : static_cast<double>(T - t0) / static_cast<double>(t1 - t0);
    const SegmentTime p00 = at(m0, t0), p01 = at(m0, t1), p10 = at(m1, t0), p11 = at(m1, t1);
    auto mix = [&](double a, double b, double c, double d) {
      return (1 - u) * ((1 - v) * a + v * b) + u * ((1 - v) * c + v * d);
    };
    SegmentTime t = u < 0.5 ? (v < 0.5 ? p00 : p01) : (v < 0.5 ? p10 : p11);  // bounds, engine: the nearest
#define ULTRASIM_MIX(f) t.f = mix(p00.f, p01.f, p10.f, p11.f)
    ULTRASIM_MIX(seconds), ULTRASIM_MIX(compute_s), ULTRASIM_MIX(fixed_s), ULTRASIM_MIX(comm_s);
    ULTRASIM_MIX(flops), ULTRASIM_MIX(bytes), ULTRASIM_MIX(link_bytes);
#undef ULTRASIM_MIX
    return t;
  }

  // The mean MoE layer of stage `stage` with T tokens packed on as few chips as hold them at m each
  // (T / m chips at m, one with the rest, spread evenly over the stage), over grid_layers_ of its MoE
  // layers spread evenly, each simulated as the exact plan would simulate it.
  SegmentTime grid_point(int stage, std::uint64_t m, std::uint64_t T) {
    const auto key = std::make_tuple(stage, m, T);
    if (const auto it = grid_.find(key); it != grid_.end()) return it->second;
    const std::string shared = grid_cache_key(stage, m, T);
    if (const auto cached = read_grid_cache(shared)) return grid_.emplace(key, *cached).first->second;
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
    const int k = std::min<int>(grid_layers_, static_cast<int>(layers.size()));
    StepPlan sample;
    for (int i = 0; i < k; ++i) {
      Segment& s = sample.segments.emplace_back();
      s.kind = Segment::kMoe, s.stage = stage, s.what = "moe";
      s.layer = layers[static_cast<std::size_t>((2 * i + 1) * static_cast<int>(layers.size()) / (2 * k))];
      s.moe = moe_layer_config(config_, chip_tokens, s.layer, 0);
    }
    const int saved = grid_layers_;
    grid_layers_ = 0;  // the sample's layers exactly
    prefetch_moe({sample});
    SegmentTime mean;
    for (const Segment& s : sample.segments) {
      const SegmentTime t = moe(s, false);
      if (&s == &sample.segments.front())
        mean.bound = t.bound, mean.comm_bound = t.comm_bound, mean.engine = t.engine;
      mean.seconds += t.seconds / k, mean.compute_s += t.compute_s / k, mean.fixed_s += t.fixed_s / k;
      mean.comm_s += t.comm_s / k, mean.flops += t.flops / k, mean.bytes += t.bytes / k;
      mean.link_bytes += t.link_bytes / k, mean.transfers += t.transfers, mean.wrong += t.wrong;
      if (t.wrong > 0 && mean.first_error.empty()) mean.first_error = t.first_error;
    }
    mean.transfers /= static_cast<std::uint64_t>(std::max(k, 1));
    grid_layers_ = saved;
    grid_.emplace(key, mean);
    write_grid_cache(shared, mean);
    return mean;
  }

  // The grid's points shared between processes (the planner's deployments of one fabric and model):
  // a file per point under grid_cache_, named by a hash of everything its simulation depends on, holding
  // that description and the point's numbers (doubles written to round-trip, so a point read is the
  // point simulated, bit for bit).
  std::string grid_cache_key(int stage, std::uint64_t m, std::uint64_t T) const {
    if (grid_cache_.empty()) return "";
    const ServingConfig& c = config_;
    std::string key = c.topology + "|" + json_text(model_json(c.model)) + "|" + c.router + "|" +
                      shortest_number(c.zipf.value_or(-1)) + "|" + c.expert_load_source + "|" +
                      shortest_number(c.capacity_factor.value_or(-1)) + "|" + c.dispatch_dtype + "|" +
                      c.combine_dtype + "|" + c.placement + "|" + std::to_string(c.replicate_hot) + "|" +
                      std::to_string(c.replicas) + "|" + std::to_string(c.max_nodes) + "|" +
                      std::to_string(c.node_chips) + "|" + std::to_string(c.seed) + "|" + c.engine + "|" +
                      profile_.name + "|" + profile_.file + "|" + std::to_string(grid_layers_) + "|" +
                      std::to_string(layout_.pp);
    for (const auto& [k, v] : c.overrides) key += "|" + k + "=" + v;
    return key + "|" + std::to_string(stage) + "|" + std::to_string(m) + "|" + std::to_string(T);
  }
  std::string grid_cache_path(const std::string& key) const {
    char name[40];
    std::snprintf(name, sizeof name, "/grid-%016zx.json", std::hash<std::string>{}(key));
    return grid_cache_ + name;
  }
  std::optional<SegmentTime> read_grid_cache(const std::string& key) {
    if (key.empty()) return std::nullopt;
    std::ifstream in(grid_cache_path(key));
    if (!in) return std::nullopt;
    try {
      const nlohmann::json j = nlohmann::json::parse(in);
      if (j.at("key").get<std::string>() != key) return std::nullopt;
      return decode(j.at("values").get<std::vector<double>>());
    } catch (const std::exception&) {  // torn or foreign: simulate it again
      return std::nullopt;
    }
  }
  void write_grid_cache(const std::string& key, const SegmentTime& t) const {
    if (key.empty()) return;
    const std::string path = grid_cache_path(key), temp = path + "." + std::to_string(::getpid());
    {
      std::ofstream out(temp);
      out << nlohmann::json{{"key", key}, {"values", encode(t)}}.dump() << "\n";
      if (!out) return;
    }
    std::rename(temp.c_str(), path.c_str());
  }

  SegmentTime send(const Segment& seg) {
    Machine& m = *full_;
    const int p = m.p(), S = layout_.stage_chips();
    std::vector<std::vector<std::uint64_t>> rows(p, std::vector<std::uint64_t>(p, 0));
    for (int c = 0; c < S; ++c) rows[seg.stage * S + c][(seg.stage + 1) * S + c] = seg.chip_bytes[c];
    const TrafficMatrix zero(std::vector<std::vector<std::uint64_t>>(p, std::vector<std::uint64_t>(p, 0)));
    MoeLayer layer(std::vector<std::vector<double>>(p, std::vector<double>(1, 0.0)), TrafficMatrix(rows),
                   zero);
    const SimResult r = simulate_here(m, layer);
    SegmentTime t;
    if (tracing_) t.run = std::make_shared<SimResult>(r);
    t.seconds = t.comm_s = r.time_s;
    t.transfers = r.transfers;
    t.wrong = r.verdict.wrong, t.first_error = r.verdict.first_error;
    t.comm_bound = comm_bound_of(m, r, r.time_s, t.link_bytes);
    return t;
  }

  ServingConfig config_;
  Engine engine_;
  const ChipProfile profile_;
  std::vector<std::pair<std::string, std::string>> topology_overrides_;
  std::vector<std::string> chip_names_;
  std::unique_ptr<Machine> full_;
  std::vector<std::unique_ptr<Machine>> stages_;
  ParamSet params_;
  std::unique_ptr<ChipModel> chip_;
  ServingLayout layout_;
  std::map<std::pair<int, std::uint64_t>, SegmentTime> allreduce_cache_;
  std::map<std::string, SegmentTime> moe_cache_;
  int grid_layers_ = 0;     // > 0: the step-time model prices MoE segments (model_moe)
  std::string grid_cache_;  // a directory of grid points shared between processes, or ""
  std::map<std::tuple<int, std::uint64_t, std::uint64_t>, SegmentTime> grid_;
  Engine used_ = Engine::kContentionFree;
  void note_engine(Engine e) {
    constexpr Engine kOrder[] = {Engine::kContentionFree, Engine::kFlow, Engine::kSimGrid, Engine::kFast};
    auto rank = [&](Engine x) {
      return std::find(std::begin(kOrder), std::end(kOrder), x) - std::begin(kOrder);
    };
    if (rank(e) > rank(used_)) used_ = e;
  }
  std::unique_ptr<SimResult> tracing_;
};

}  // namespace serving_detail

namespace {
using namespace serving_detail;

// The plans of one step: one, or one per micro-batch.
std::vector<StepPlan> step_plans(ServingSim& sim,
                                 const std::vector<std::pair<std::uint64_t, std::uint64_t>>& requests,
                                 bool decode, int batch) {
  std::vector<StepPlan> plans;
  if (sim.config().micro_batches == 1)
    plans.push_back(plan_step(sim.config(), sim.layout(), requests, decode, batch));
  else
    for (int mb = 0; mb < 2; ++mb)
      plans.push_back(plan_step(sim.config(), sim.layout(), requests, decode, batch, mb));
  return plans;
}

nlohmann::ordered_json seconds_json(const std::map<std::string, double>& m) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [k, v] : m) out[k] = v;
  return out;
}

std::string main_bound(const std::map<std::string, double>& m) {
  std::string best;
  double most = -1;
  for (const auto& [k, v] : m)
    if (v > most) most = v, best = k;
  return best;
}

// The steps of one batch size: a prefill and a decode per routed batch, or one of them (--phase).
int steps_per_batch_size(const ServingConfig& config) {
  return config.batches * (config.phase == "both" ? 2 : 1);
}

// One batch size's steps: per routed batch, TTFT and TPOT; batch 0's steps and tokens.
struct BatchSteps {
  std::vector<double> ttft, tpot;
  std::optional<StepTime> prefill0, decode0;
  double input_tokens = 0, output_tokens = 0;
};

// Every routed batch's prefill and decode at batch size B, each step advancing `progress`.
BatchSteps run_batches(ServingSim& sim, std::uint64_t B, StepTime& totals, bool trace, Progress& progress) {
  const ServingConfig& config = sim.config();
  BatchSteps out;
  auto& [ttft, tpot, prefill0, decode0, input_tokens, output_tokens] = out;
  for (int b = 0; b < config.batches; ++b) {
    const auto requests = draw_requests(config, B, b);
    if (b == 0)
      for (const auto& [in, out] : requests)
        input_tokens += static_cast<double>(in), output_tokens += static_cast<double>(out);
    for (const bool decode : {false, true}) {
      if ((decode && config.phase == "prefill") || (!decode && config.phase == "decode")) continue;
      // The trace: batch 0's decode step (its prefill with --phase prefill).
      if (trace && b == 0 && (decode || config.phase == "prefill")) sim.trace_next_step();
      const StepTime t = sim.step(step_plans(sim, requests, decode, b));
      progress.advance();
      // TPOT: a decode step yields tokens_per_step tokens per request (1 without a draft).
      (decode ? tpot : ttft).push_back(decode ? t.seconds / config.tokens_per_step() : t.seconds);
      if (b == 0) (decode ? decode0 : prefill0) = t;
      totals.transfers += t.transfers;
      if (t.wrong > 0 && totals.wrong == 0) totals.first_error = t.first_error;
      totals.wrong += t.wrong;
    }
  }
  return out;
}

// One batch size: every routed batch's prefill and decode, each step advancing `progress`.
nlohmann::ordered_json serve_point(ServingSim& sim, std::uint64_t B, StepTime& totals, bool trace,
                                   Progress& progress) {
  const ServingConfig& config = sim.config();
  const ServingLayout& layout = sim.layout();
  const ParamSet& params = sim.params();
  const MemoryUse use = memory_use(config, layout, params, B);
  check_memory(use, B);
  const auto [ttft, tpot, prefill0, decode0, input_tokens, output_tokens] =
      run_batches(sim, B, totals, trace, progress);
  const int chips = layout.chips, pp = layout.pp;
  const int switches = static_cast<int>(sim.full().topology->switches().size());
  const ChipParams chip = chip_of(params);
  const double peak = chip.chip_flops, hbm = chip.hbm_bandwidth;
  nlohmann::ordered_json p;
  p["batch"] = B;
  auto stats = [&](const std::string& name, const std::vector<double>& v) {
    p[name + "_s"] = v.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(v.front());
    p[name + "_p50_s"] = v.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(percentile(v, 0.5));
    p[name + "_p99_s"] = v.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(percentile(v, 0.99));
  };
  stats("ttft", ttft);
  stats("tpot", tpot);
  if (decode0) {
    const double step = percentile(tpot, 0.5);
    const double tokens_per_s = step > 0 ? pp * static_cast<double>(B) / step : 0;
    const double tokens = pp * static_cast<double>(B) * config.tokens_per_step();  // per decode step
    const double energy =
        workload_energy_j(params, chips, switches, decode0->seconds, decode0->link_bytes * pp);
    p["tokens_per_s"] = tokens_per_s;
    p["tokens_per_s_per_chip"] = tokens_per_s / chips;
    p["mfu"] = decode0->flops / (decode0->seconds * chips * peak);
    p["hbm_utilisation"] = decode0->bytes / (decode0->seconds * chips * hbm);
    p["energy_per_token_j"] = energy / tokens;
    p["cost_per_mtok_usd"] = workload_cost_usd(params, chips, decode0->seconds) / tokens * 1e6;
    p["bound"] = main_bound(decode0->bound_s);
    p["bound_s"] = seconds_json(decode0->bound_s);
    p["parts_s"] = seconds_json(decode0->parts_s);
  }
  if (prefill0) {
    const double step = percentile(ttft, 0.5);
    p["prefill_tokens_per_s"] = step > 0 ? pp * input_tokens / step : 0;
    p["prefill_mfu"] = prefill0->flops / (prefill0->seconds * chips * peak);
    p["prefill_bound"] = main_bound(prefill0->bound_s);
    p["prefill_bound_s"] = seconds_json(prefill0->bound_s);
    p["prefill_parts_s"] = seconds_json(prefill0->parts_s);
  }
  if (prefill0 && decode0 && output_tokens > 0) {
    const double life =
        percentile(ttft, 0.5) + output_tokens / static_cast<double>(B) * percentile(tpot, 0.5);
    p["request_tokens_per_s"] = pp * output_tokens / life;
  }
  if (const auto& t = decode0 ? decode0 : prefill0) {
    p["moe_layer_s"] = t->moe_s;
    p["tp_allreduce"] =
        t->tp_count == 0
            ? nlohmann::ordered_json()
            : nlohmann::ordered_json{{"bytes", t->tp_bytes}, {"time_s", t->tp_s}, {"count", t->tp_count}};
  }
  p["weights_bytes_per_chip"] = use.weights;
  p["kv_bytes_per_chip"] = use.kv;
  p["hbm_capacity_bytes"] = use.capacity;
  return p;
}

// The frontier's answers: per target, the point with the most tokens/s per chip at p99 TPOT <= target.
nlohmann::ordered_json frontier_json(const std::vector<double>& targets,
                                     const nlohmann::ordered_json& points) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const double target : targets) {
    nlohmann::ordered_json best;
    for (const auto& p : points) {
      if (p.contains("error") || !p.contains("tokens_per_s_per_chip") ||
          p["tpot_p99_s"].get<double>() > target)
        continue;
      if (best.is_null() ||
          p["tokens_per_s_per_chip"].get<double>() > best["tokens_per_s_per_chip"].get<double>())
        best = p;
    }
    nlohmann::ordered_json row;
    row["tpot_target_s"] = target;
    row["batch"] = best.is_null() ? nlohmann::ordered_json() : best["batch"];
    for (const char* k :
         {"tokens_per_s_per_chip", "tpot_p99_s", "cost_per_mtok_usd", "energy_per_token_j", "bound"})
      row[k] = best.is_null() ? nlohmann::ordered_json() : best[k];
    out.push_back(row);
  }
  return out;
}

// The configuration, as the result's fields after its head.
void serving_config_json(nlohmann::ordered_json& out, const ServingConfig& config, ServingSim& sim) {
  using json = nlohmann::ordered_json;
  const ServingLayout& layout = sim.layout();
  out["model"] = model_json(config.model);
  out["chip"] = sim.profile().name;
  out["chip_file"] = sim.profile().file.empty() ? json() : json(sim.profile().file);
  out["layout"] = {{"tp", layout.tp}, {"pp", layout.pp}, {"dp", layout.dp}, {"ep", layout.ep}};
  out["placement"] = config.placement;
  const int S = layout.stage_chips();  // the replicas in effect: balanced fills the free slots by default
  out["replicate_hot"] =
      config.model.moe() ? moe_layer_config(config, std::vector<std::uint64_t>(S, 1), 0, 0).hot_replicated(S)
                         : 0;
  out["replicas"] = config.replicas;
  out["micro_batches"] = config.micro_batches;
  out["phase"] = config.phase;
  const bool fixed = config.lengths.empty(), zipf = config.expert_load.empty();
  out["input_len"] = fixed ? json(config.input_len) : json();
  out["output_len"] = fixed ? json(config.output_len) : json();
  out["lengths"] = fixed ? json() : json(config.lengths_source);
  out["router"] = config.router;
  out["zipf"] = zipf ? json(config.zipf.value_or(config.model.expert_zipf)) : json();
  out["expert_load"] = zipf ? json() : json(config.expert_load_source);
  out["max_nodes_per_token"] = config.max_nodes > 0 ? json(config.max_nodes) : json();
  out["node_chips"] = config.max_nodes > 0 ? json(config.node_chips) : json();
  out["draft_tokens"] = config.draft_tokens;
  out["draft_layers"] = config.draft_tokens > 0 ? json(config.draft_layers) : json();
  out["acceptance"] = config.draft_tokens > 0 ? json(config.acceptance) : json();
  out["tokens_per_step"] = config.tokens_per_step();
  out["batches"] = config.batches;
  out["seed"] = config.seed;
  out["allreduce"] = config.allreduce;
}

// Every batch size's point; one that does not fit is an error point unless it is the only one (or all fail).
nlohmann::ordered_json serve_points(ServingSim& sim, StepTime& totals, bool trace) {
  const ServingConfig& config = sim.config();
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  std::string first_failure;
  bool any = false;
  const int steps = steps_per_batch_size(config);
  Progress progress("serve: steps", config.batch_sizes.size() * static_cast<std::size_t>(steps));
  for (const auto B : config.batch_sizes) {
    const std::size_t before = progress.done();
    try {
      points.push_back(serve_point(sim, B, totals, trace && points.empty(), progress));
      any = true;
    } catch (const InputError& e) {
      progress.advance(before + static_cast<std::size_t>(steps) - progress.done());  // its steps not run
      if (config.batch_sizes.size() == 1) throw;
      if (first_failure.empty()) first_failure = e.what();
      points.push_back({{"batch", B}, {"error", e.what()}});
    }
  }
  if (!any) throw InputError(first_failure);
  return points;
}

// The traced step as one run of the whole fabric, with its links' utilisation, into `file`.
void write_serving_trace(OutputFile& file, ServingSim& sim, const nlohmann::ordered_json& result) {
  std::unique_ptr<SimResult> run = sim.take_trace();
  if (!run) throw InputError("--trace: the first batch size has no step to trace");
  std::sort(run->transfer_records.begin(), run->transfer_records.end(), [](const auto& a, const auto& b) {
    return std::tie(a.start, a.src, a.dst) < std::tie(b.start, b.src, b.dst);
  });
  run->engine = sim.engine_used();
  Machine& full = sim.full();
  const RecordPaths paths(*full.routes, full.faults);
  const LinkStats links =
      compute_link_stats(*full.topology, paths, full.faults, run->transfer_records, run->time_s);
  write_chrome_trace(file, *full.topology, *run, &links, nlohmann::json::parse(json_text(result)),
                     TraceOptions{});
  file.close();
}

}  // namespace

nlohmann::ordered_json run_serving(const ServingConfig& config, const std::string& command,
                                   const std::string& trace) {
  config.validate();
  if (!trace.empty() && config.micro_batches != 1)
    throw InputError(
        "--trace shows one step's segments in order: it cannot show --micro-batches 2's overlap");
  ServingSim sim(config);
  std::unique_ptr<OutputFile> trace_file;
  if (!trace.empty()) trace_file = std::make_unique<OutputFile>(trace, "trace");
  nlohmann::ordered_json out = workload_result(command, "serving", config.topology, sim.layout().chips);
  serving_config_json(out, sim.config(), sim);
  StepTime totals;
  const nlohmann::ordered_json points = serve_points(sim, totals, trace_file != nullptr);
  if (points.size() == 1)  // one batch size: its fields at the top level too (what a sweep tabulates)
    for (const auto& [k, v] : points.front().items())
      if (k != "batch") out[k] = v;
  out["batch"] = config.batch_sizes.size() == 1 ? nlohmann::ordered_json(config.batch_sizes.front())
                                                : nlohmann::ordered_json(config.batch_sizes);
  out["points"] = points;
  out["frontier"] = frontier_json(config.tpot_targets, points);
  if (config.check_engine > 0) {  // the first batch size's first step (decode unless prefill only)
    const bool decode = config.phase != "prefill";
    const auto requests = draw_requests(config, config.batch_sizes.front(), 0);
    out["engine_check"] =
        engine_check_json(sim.check_engine(step_plans(sim, requests, decode, 0), config.check_engine));
  }
  SimResult summary;
  summary.transfers = totals.transfers;
  summary.engine = sim.engine_used();
  close_workload_result(out, totals.wrong, totals.first_error, summary, sim.params());
  if (trace_file) write_serving_trace(*trace_file, sim, out);
  return out;
}

std::string serving_table(const nlohmann::ordered_json& r) {
  std::ostringstream out;
  const auto& l = r["layout"];
  const bool moe = r["model"]["experts"].get<int>() > 0;
  out << "# Serving " << r["model"]["name"].get<std::string>() << " on " << r["topology"].get<std::string>()
      << " (" << r["chips"] << " chips of " << r["chip"].get<std::string>() << "): tp " << l["tp"] << ", pp "
      << l["pp"] << ", dp " << l["dp"];
  if (moe)
    out << ", ep " << l["ep"] << ", " << r["placement"].get<std::string>() << " placement, "
        << r["router"].get<std::string>() << " router";
  out << ", " << r["batches"] << " batch" << (r["batches"].get<int>() == 1 ? "" : "es") << " each\n";
  auto ms = [](const nlohmann::ordered_json& v) {
    return v.is_null() ? std::string("-") : fixed_text(v.get<double>() * 1e3, 3);
  };
  auto num = [](const nlohmann::ordered_json& v, int d) {
    return v.is_null() ? std::string("-") : fixed_text(v.get<double>(), d);
  };
  out << "batch  TTFT p50 ms  TTFT p99 ms  TPOT p50 ms  TPOT p99 ms  tok/s/chip    MFU  HBM util  J/token  "
         "USD/Mtok  bound\n";
  for (const auto& p : r["points"]) {
    std::string row = std::to_string(p["batch"].get<std::uint64_t>());
    row.resize(7, ' ');
    if (p.contains("error")) {
      out << row << p["error"].get<std::string>() << "\n";
      continue;
    }
    auto col = [&](const std::string& text, std::size_t width) {
      row += std::string(width > text.size() ? width - text.size() : 0, ' ') + text + "  ";
    };
    auto get = [&](const char* k) { return p.contains(k) ? p[k] : nlohmann::ordered_json(); };
    col(ms(get("ttft_p50_s")), 11);
    col(ms(get("ttft_p99_s")), 11);
    col(ms(get("tpot_p50_s")), 11);
    col(ms(get("tpot_p99_s")), 11);
    col(num(get("tokens_per_s_per_chip"), 1), 10);
    col(num(get("mfu"), 3), 5);
    col(num(get("hbm_utilisation"), 3), 8);
    col(num(get("energy_per_token_j"), 4), 7);
    col(num(get("cost_per_mtok_usd"), 3), 8);
    row += p.contains("bound") ? p["bound"].get<std::string>() : p.value("prefill_bound", std::string("-"));
    out << row << "\n";
  }
  for (const auto& f : r["frontier"])
    out << "p99 TPOT <= " << fixed_text(f["tpot_target_s"].get<double>() * 1e3, 3) << " ms: "
        << (f["batch"].is_null()
                ? std::string("no batch size meets it")
                : "batch " + std::to_string(f["batch"].get<std::uint64_t>()) + ", " +
                      fixed_text(f["tokens_per_s_per_chip"].get<double>(), 1) + " tokens/s per chip, " +
                      fixed_text(f["cost_per_mtok_usd"].get<double>(), 3) + " USD per million tokens")
        << "\n";
  out << "verified " << (r["verified"].get<bool>() ? "yes" : "NO") << "\n";
  return out.str();
}

struct ServingStepper::Impl {
  serving_detail::ServingSim sim;
  bool exact;
  explicit Impl(const ServingConfig& config, bool x) : sim(config), exact(x) {}
};

ServingStepper::ServingStepper(const ServingConfig& config, bool exact, int grid_layers,
                               const std::string& grid_cache)
    : impl_(std::make_unique<Impl>(config, exact)) {
  if (!exact) impl_->sim.model_moe(std::max(grid_layers, 1), grid_cache);
}
ServingStepper::~ServingStepper() = default;
const ServingConfig& ServingStepper::config() const {
  return impl_->sim.config();
}
const ServingLayout& ServingStepper::layout() const {
  return impl_->sim.layout();
}
const ParamSet& ServingStepper::params() const {
  return impl_->sim.params();
}
const ChipProfile& ServingStepper::profile() const {
  return impl_->sim.profile();
}
int ServingStepper::switches() const {
  return static_cast<int>(impl_->sim.full().topology->switches().size());
}
std::string ServingStepper::engine() const {
  return engine_entry(impl_->sim.engine_used()).name;
}
std::size_t ServingStepper::grid_points() const {
  return impl_->sim.grid_points();
}

ServingStepper::Step ServingStepper::step(const std::vector<StepItem>& items) {
  const StepTime t =
      impl_->sim.step({plan_iteration(impl_->sim.config(), impl_->sim.layout(), items, 0, !impl_->exact)});
  return {t.seconds, t.flops, t.link_bytes, t.wrong, t.first_error};
}

ServingStepper::Step ServingStepper::exchange(const std::vector<std::vector<std::uint64_t>>& rows) {
  const SegmentTime t = impl_->sim.exchange(rows);
  return {t.seconds, 0, t.link_bytes, t.wrong, t.first_error};
}

WorkloadKind serving_workload() {
  return {"serving",
          "a model served on the fabric: prefill (TTFT) and decode (TPOT) steps (ultrasim serve)",
          "serve",
          {"tpot_p99_s", "tpot_p50_s", "ttft_p50_s", "ttft_p99_s", "tokens_per_s_per_chip", "mfu",
           "hbm_utilisation", "energy_per_token_j", "cost_per_mtok_usd", "bound", "verified"},
          {"table", "json"},
          [](const nlohmann::json& w, const std::string& file) {
            if (!production_config_from_json(w, file)) serving_config_from_json(w, file);
          },
          [](const nlohmann::json& w, const std::string& file, const WorkloadOutput& output) {
            if (const auto arrivals = production_config_from_json(w, file))  // request arrivals
              return print_workload_result(run_production(*arrivals, output.command, output.trace),
                                           output.format, production_table);
            return print_workload_result(
                run_serving(serving_config_from_json(w, file), output.command, output.trace), output.format,
                serving_table);
          },
          serving_table};
}

}  // namespace ultrasim
