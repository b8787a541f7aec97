#include "workloads/moe/moe_run.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "sim/analysis/link_stats.hpp"
#include "sim/analysis/report.hpp"
#include "sim/analysis/trace.hpp"
#include "sim/engines/runner.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/units.hpp"
#include "workloads/moe/moe_layer.hpp"
#include "workloads/registry.hpp"
#include "workloads/workload_metrics.hpp"

namespace ultrasim {
namespace {

// Batch `batch`: the router's choices, and the layer the chips run on them.
struct MoeBatch {
  MoeRouting routing;
  std::unique_ptr<MoeLayer> layer;
};

MoeBatch route_batch(const Machine& machine, const MoeConfig& config, const ParamSet& moe, int batch) {
  MoeBatch out{route_tokens(config, machine.p(), batch), nullptr};
  out.layer = make_moe_layer(out.routing, config, moe);
  return out;
}

// What auto runs a contended layer on: one layer (a batch) exactly, a tail of batches on the fast engine.
Engine contended_engine(const MoeConfig& config) {
  return config.batches > 1 ? Engine::kFast : Engine::kFlow;
}

// Batches 1..n-1, as many at once as there are cores (the child-process pool), in batch order.
std::vector<double> batch_times(Machine& machine, const MoeConfig& config, const ParamSet& moe, int n,
                                Engine engine) {
  const std::size_t batches = n > 1 ? static_cast<std::size_t>(n - 1) : 0;
  const auto values = run_in_children(
      batches,
      [&](std::size_t i) {  // batch i + 1's layer time; -1 if it did not verify
        MoeBatch batch = route_batch(machine, config, moe, static_cast<int>(i) + 1);
        RunOptions options;
        options.engine = engine;
        options.contended = contended_engine(config);
        const SimResult result = simulate(machine, *batch.layer, options);
        return std::vector<double>{result.verdict.wrong == 0 ? result.time_s : -1.0};
      },
      [](std::size_t i) {
        throw SimulationError("MoE batch " + std::to_string(i + 1) + " failed to simulate");
      },
      [](const std::vector<double>& v) { return v.size() == 1 && v.front() >= 0; });
  std::vector<double> times;
  for (const auto& v : values) times.push_back(v.front());
  return times;
}

// Whether the records carry exactly the dispatch and combine matrices (cancelled flows aside): every
// chip sent its tokens and got their outputs back. Returns the pairs that differ.
std::uint64_t check_traffic(const SimResult& result, const TrafficMatrix& dispatch,
                            const TrafficMatrix& combine, std::string& first_error) {
  const int p = dispatch.p();
  std::vector<std::uint64_t> moved(2 * static_cast<std::size_t>(p) * p, 0);
  for (const auto& x : result.transfer_records)
    if (!x.cancelled && x.src >= 0 && x.dst >= 0)
      moved[(is_combine_step(x.step) ? p * p : 0) + x.src * p + x.dst] += x.bytes;
  std::uint64_t wrong = 0;
  for (int phase = 0; phase < 2; ++phase)
    for (int s = 0; s < p; ++s)
      for (int d = 0; d < p; ++d) {
        if (s == d) continue;
        const std::uint64_t want = phase == 0 ? dispatch.bytes(s, d) : combine.bytes(s, d);
        const std::uint64_t got = moved[phase * p * p + s * p + d];
        if (got != want && wrong++ == 0)
          first_error = std::string(phase == 0 ? "dispatch" : "combine") + " chip" + std::to_string(s) +
                        " -> chip" + std::to_string(d) + ": " + std::to_string(got) + " bytes, expected " +
                        std::to_string(want);
      }
  return wrong;
}

// The machine the layer runs on: the overrides the chip's, energy's and price's parameters do not declare
// are the topology's and the model's. A chip may send to every other at once (the dispatch).
Machine moe_machine(const MoeConfig& config) {
  ParamSet chip(chip_params());
  return build_machine(config.topology, chip.apply_known(config.overrides), chip.names(), true);
}

// Writes the p-chip dispatch matrix to `out` (--traffic-out): JSON bytes, row = sender.
void write_moe_traffic(OutputFile& out, const TrafficMatrix& dispatch, int p) {
  nlohmann::json rows = nlohmann::json::array();
  for (int s = 0; s < p; ++s) {
    rows.push_back(nlohmann::json::array());
    for (int d = 0; d < p; ++d) rows.back().push_back(dispatch.bytes(s, d));
  }
  out << json_text(nlohmann::json{{"description", "MoE dispatch, bytes, row = sender"}, {"bytes", rows}})
      << "\n";
  out.close();
}

// What the first batch's run measured, as the result reports it.
struct MoeMeasures {
  double time = 0;                                              // the layer time
  double dispatch_end = 0, combine_start = 0, combine_end = 0;  // the phases
  int straggler = 0;                                            // the chip with the longest expert time
  ExpertCompute straggler_compute;                              // its expert work, per chunk
  double expert_s = 0;                                          // its expert time, all chunks
  double max_copies = 0, total_copies = 0;                      // token copies: on the busiest chip, on all
  int busiest = 0;
  double carried = 0;                                   // bytes times links crossed
  std::uint64_t dispatch_bytes = 0, combine_bytes = 0;  // between chips (own parts aside)
  std::uint64_t wrong = 0;
  std::string first_error;
};

// Phases: the last dispatch delivery; combine from first start to last delivery.
void moe_phase_times(const SimResult& result, MoeMeasures& m) {
  m.dispatch_end = 0, m.combine_start = m.time, m.combine_end = 0;
  for (const auto& x : result.transfer_records) {
    if (is_combine_step(x.step)) {
      m.combine_start = std::min(m.combine_start, x.start);
      m.combine_end = std::max(m.combine_end, x.end);
    } else {
      m.dispatch_end = std::max(m.dispatch_end, x.end);
    }
  }
}

// The busiest chip's expert time (the straggler), and the chip holding the most token copies.
void moe_chip_load(const MoeRouting& routing, const MoeConfig& config, const ParamSet& moe, int p,
                   MoeMeasures& m) {
  std::vector<ExpertCompute> experts(p);
  for (int c = 0; c < p; ++c) {
    experts[c] = expert_compute(routing, c, config, moe, config.micro_chunks);
    if (experts[c].seconds > experts[m.straggler].seconds) m.straggler = c;
  }
  m.straggler_compute = experts[m.straggler];
  m.expert_s = experts[m.straggler].seconds * config.micro_chunks;
  for (int c = 0; c < p; ++c) {
    const auto copies = static_cast<double>(routing.copies_on(c));
    m.total_copies += copies;
    if (copies > m.max_copies) m.max_copies = copies, m.busiest = c;
  }
}

// The layer's configuration, as the result's fields after its head (workload_result).
void moe_config_json(nlohmann::ordered_json& out, const MoeConfig& config, const MoeRouting& routing) {
  out["experts"] = config.experts;
  out["top_k"] = config.top_k;
  out["tokens_per_chip"] = config.tokens_per_chip;
  out["hidden"] = config.hidden;
  out["ffn"] = config.ffn == 0 ? config.hidden : config.ffn;
  out["router"] = config.router;
  out["zipf"] = config.expert_load.empty() ? nlohmann::ordered_json(config.zipf) : nlohmann::ordered_json();
  out["expert_load"] = config.expert_load.empty() ? nlohmann::ordered_json()
                                                  : nlohmann::ordered_json(config.expert_load_source);
  out["capacity_factor"] =
      config.capacity_factor ? nlohmann::ordered_json(*config.capacity_factor) : nlohmann::ordered_json();
  out["capacity_tokens"] =
      routing.capacity ? nlohmann::ordered_json(*routing.capacity) : nlohmann::ordered_json();
  out["dedup"] = config.dedup;
  out["dispatch_dtype"] = config.dispatch_dtype;
  out["combine_dtype"] = config.combine_dtype;
  out["weight_dtype"] = config.weight_dtype;
  out["micro_chunks"] = config.micro_chunks;
  out["placement"] = config.placement;
  out["replicate_hot"] = config.hot_replicated(routing.p);
  out["replicas"] = config.replicas;
  out["batches"] = config.batches;
  out["seed"] = config.seed;
}

// The layer's times, load, bytes, energy and cost, as the result's fields after its configuration.
void moe_measures_json(nlohmann::ordered_json& out, const Machine& machine, const MoeConfig& config,
                       const MoeBatch& batch, const MoeMeasures& m, const std::vector<double>& times,
                       const ParamSet& moe) {
  const MoeRouting& routing = batch.routing;
  const TrafficMatrix& dispatch = batch.layer->dispatch();
  const int p = machine.p();
  const double time = m.time;
  double tokens = 0;
  for (int c = 0; c < p; ++c) tokens += static_cast<double>(config.tokens_of(c));
  const int switches = static_cast<int>(machine.topology->switches().size());
  const double energy = workload_energy_j(moe, p, switches, time, m.carried);
  const double cost = workload_cost_usd(moe, p, time);
  out["layer_time_s"] = time;
  out["model_s"] = batch.layer->model_s(machine.cost_input_of(dispatch.busiest_load(), &dispatch));
  out["dispatch_s"] = m.dispatch_end;
  out["expert_s"] = m.expert_s;
  out["combine_s"] = m.combine_end > 0 ? m.combine_end - m.combine_start : 0.0;
  out["layer_time_p50_s"] = percentile(times, 0.50);
  out["layer_time_p99_s"] = percentile(times, 0.99);
  out["layer_time_max_s"] = *std::max_element(times.begin(), times.end());
  out["batch_times_s"] = times;
  out["tokens"] = static_cast<std::uint64_t>(tokens);
  out["tokens_per_s"] = time > 0 ? nlohmann::ordered_json(tokens / time) : nlohmann::ordered_json();
  out["routed_copies"] = routing.routed;
  out["dropped_tokens"] = routing.dropped;
  out["dropped_fraction"] = routing.routed ? static_cast<double>(routing.dropped) / routing.routed : 0.0;
  out["imbalance"] = m.total_copies > 0 ? m.max_copies / (m.total_copies / p) : 1.0;
  out["busiest_chip"] = m.busiest;
  out["busiest_chip_copies"] = static_cast<std::uint64_t>(m.max_copies);
  out["straggler_chip"] = m.straggler;
  out["straggler_bound"] = m.straggler_compute.memory_bound ? "memory" : "compute";
  out["straggler_flops"] = m.straggler_compute.flops * config.micro_chunks;
  out["straggler_hbm_bytes"] = m.straggler_compute.bytes * config.micro_chunks;
  out["dispatch_bytes"] = m.dispatch_bytes;
  out["combine_bytes"] = m.combine_bytes;
  out["busiest_dispatch_bytes"] = dispatch.busiest_load();
  out["link_bytes"] = m.carried;
  out["energy_j"] = energy;
  out["tokens_per_j"] = energy > 0 ? nlohmann::ordered_json(tokens / energy) : nlohmann::ordered_json();
  out["cost_usd"] = cost;
  out["cost_per_mtok_usd"] = cost / tokens * 1e6;
}

// An MoE layer prepared to run: its machine, batch 0's routing and layer, its result from a run of it.
class PreparedMoe : public PreparedWorkload {
 public:
  PreparedMoe(const MoeConfig& config, std::string command)
      : config_((config.validate(), config)),
        command_(std::move(command)),
        machine_(moe_machine(config_)),
        moe_(with_params(machine_.topology->params(), chip_params(), config_.overrides)),
        batch_(route_batch(machine_, config_, moe_, 0)) {}
  Machine& machine() override { return machine_; }
  Program& program() override { return *batch_.layer; }
  const MoeConfig& config() const { return config_; }
  const ParamSet& moe() const { return moe_; }
  const MoeBatch& batch() const { return batch_; }
  // The layer times of batches 1..n-1 (run_moe simulates them in child processes); none: every batch
  // takes batch 0's time (a job runs one batch).
  std::vector<double> other_batches;

  nlohmann::ordered_json result(const SimResult& result) override {
    const int p = machine_.p();
    const TrafficMatrix& dispatch = batch_.layer->dispatch();
    const TrafficMatrix& combine = batch_.layer->combine();
    MoeMeasures m;
    m.time = result.time_s;
    std::vector<double> times = other_batches;
    if (config_.router != "random" || times.empty()) times.assign(config_.batches - 1, m.time);
    times.insert(times.begin(), m.time);
    m.first_error = result.verdict.first_error;
    m.wrong = result.verdict.wrong + check_traffic(result, dispatch, combine, m.first_error);
    moe_phase_times(result, m);
    moe_chip_load(batch_.routing, config_, moe_, p, m);
    const RecordPaths paths(*machine_.routes, machine_.faults);
    m.carried = static_cast<double>(link_bytes(paths, result.transfer_records));
    for (int s = 0; s < p; ++s)
      for (int d = 0; d < p; ++d)
        if (s != d) m.dispatch_bytes += dispatch.bytes(s, d), m.combine_bytes += combine.bytes(s, d);
    nlohmann::ordered_json out = workload_result(command_, "moe", config_.topology, p);
    moe_config_json(out, config_, batch_.routing);
    moe_measures_json(out, machine_, config_, batch_, m, times, moe_);
    close_workload_result(out, m.wrong, m.first_error, result, moe_);
    return out;
  }

 private:
  MoeConfig config_;
  std::string command_;
  Machine machine_;
  ParamSet moe_;
  MoeBatch batch_;
};

}  // namespace

nlohmann::ordered_json run_moe(const MoeRunRequest& request) {
  const Engine engine = parse_engine(request.engine);
  if (request.check_engine != 0)
    check_engine_count(request.check_engine, request.config.batches, "one MoE layer per batch, --batches");
  PreparedMoe prepared(request.config, request.command);
  const MoeConfig& config = prepared.config();
  Machine& machine = prepared.machine();
  const int p = machine.p();
  // The outputs before any simulation: a path that cannot be one fails fast, and touches neither.
  std::unique_ptr<OutputFile> trace, traffic;
  if (!request.trace.empty()) trace = std::make_unique<OutputFile>(request.trace, "trace");
  if (!request.traffic.empty()) traffic = std::make_unique<OutputFile>(request.traffic, "traffic matrix");

  // Further batches first, each in a child (before this process runs its own simulation). The uniform
  // router routes every batch alike: one simulation stands for all.
  if (config.router == "random")
    prepared.other_batches = batch_times(machine, config, prepared.moe(), config.batches, engine);

  if (traffic) write_moe_traffic(*traffic, prepared.batch().layer->dispatch(), p);

  RunOptions options;
  options.engine = engine;
  options.contended = contended_engine(config);
  options.record = true;  // the traffic check and the phases read the records
  const SimResult result = simulate(machine, prepared.program(), options);
  nlohmann::ordered_json out = prepared.result(result);
  if (request.check_engine > 0) {
    EngineCheck check;
    for (int b = 0; b < request.check_engine; ++b) {
      MoeBatch batch = route_batch(machine, config, prepared.moe(), b);
      check.add("the layer of batch " + std::to_string(b), machine, *batch.layer);
    }
    out["engine_check"] = engine_check_json(check);
  }
  if (trace) {  // its utilisation counters need the rates: the statistics only here
    const RecordPaths paths(*machine.routes, machine.faults);
    const LinkStats links =
        compute_link_stats(*machine.topology, paths, machine.faults, result.transfer_records, result.time_s);
    write_chrome_trace(*trace, *machine.topology, result, &links, nlohmann::json::parse(json_text(out)),
                       TraceOptions{});
    trace->close();
  }
  return out;
}

std::string moe_table(const nlohmann::ordered_json& r) {
  std::ostringstream out;
  auto us = [](const nlohmann::ordered_json& v) { return fixed_text(v.get<double>() * 1e6, 2) + " us"; };
  out << "# MoE layer on " << r["topology"].get<std::string>() << " (" << r["chips"]
      << " chips): " << r["experts"] << " experts, top-" << r["top_k"] << ", " << r["tokens_per_chip"]
      << " tokens/chip, hidden " << r["hidden"] << ", ffn " << r["ffn"] << ", router "
      << r["router"].get<std::string>() << "\n";
  out << "layer time      " << us(r["layer_time_s"]) << "   (model " << us(r["model_s"]) << ")\n";
  out << "  dispatch      " << us(r["dispatch_s"]) << "   last token delivered\n";
  out << "  experts       " << us(r["expert_s"]) << "   chip " << r["straggler_chip"] << ", "
      << r["straggler_bound"].get<std::string>() << "-bound\n";
  out << "  combine       " << us(r["combine_s"]) << "   first send to last delivery\n";
  if (r["batches"].get<int>() > 1)
    out << "batches " << r["batches"] << ": p50 " << us(r["layer_time_p50_s"]) << ", p99 "
        << us(r["layer_time_p99_s"]) << ", max " << us(r["layer_time_max_s"]) << "\n";
  out << "tokens/s        "
      << fixed_text(r["tokens_per_s"].is_null() ? 0.0 : r["tokens_per_s"].get<double>(), 0) << "\n";
  out << "imbalance       " << fixed_text(r["imbalance"].get<double>(), 3)
      << " (max/mean token copies per chip)\n";
  out << "dropped         " << r["dropped_tokens"] << " of " << r["routed_copies"] << " token copies\n";
  out << "energy          " << fixed_text(r["energy_j"].get<double>(), 4) << " J, "
      << fixed_text(r["tokens_per_j"].is_null() ? 0.0 : r["tokens_per_j"].get<double>(), 1) << " tokens/J\n";
  out << "cost            " << fixed_text(r["cost_per_mtok_usd"].get<double>(), 4)
      << " USD per million tokens\n";
  out << "verified        " << (r["verified"].get<bool>() ? "yes" : "NO") << "\n";
  return out.str();
}

WorkloadKind moe_workload() {
  return {"moe",
          "an MoE layer: dispatch, expert compute, combine (ultrasim moe)",
          "moe",
          {"layer_time_s", "dispatch_s", "expert_s", "combine_s", "model_s", "tokens_per_s", "dropped_tokens",
           "dropped_fraction", "imbalance", "busiest_chip", "straggler_bound", "busiest_dispatch_bytes",
           "energy_j", "tokens_per_j", "cost_per_mtok_usd", "verified"},
          {"table", "json"},
          [](const nlohmann::json& w, const std::string& file) { moe_config_from_json(w, file).validate(); },
          [](const nlohmann::json& w, const std::string& file, const WorkloadOutput& output) {
            MoeRunRequest request;
            request.config = moe_config_from_json(w, file);
            request.command = output.command;
            request.trace = output.trace;
            return print_workload_result(run_moe(request), output.format, moe_table);
          },
          moe_table,
          [](const nlohmann::json& w, const std::string& file, const std::string& command) {
            const MoeConfig config = moe_config_from_json(w, file);
            if (config.batches != 1)
              throw InputError("workload file '" + file +
                               "': a job runs one batch of its MoE layer ('batches': " +
                               std::to_string(config.batches) + ")");
            return std::make_unique<PreparedMoe>(config, command);
          }};
}

}  // namespace ultrasim
