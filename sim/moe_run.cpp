#include "sim/moe_run.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <fstream>
#include <sstream>
#include <thread>

#include "sim/link_stats.hpp"
#include "topology/base/output_file.hpp"
#include "sim/report.hpp"
#include "sim/runner.hpp"
#include "sim/trace.hpp"
#include "sim/workloads.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/units.hpp"
#include "workloads/collective_job.hpp"
#include "workloads/moe_layer.hpp"

namespace ultrasim {
namespace {

// Routes batch `batch` and makes `prepared` run it: the dispatch matrix as its traffic, the MoeLayer
// program as its algorithm.
MoeRouting install_batch(PreparedJob& prepared, const MoeConfig& config, const ParamSet& moe, int batch) {
  const int p = prepared.p(), m = config.micro_chunks;
  MoeRouting routing = route_tokens(config, p, batch);
  const MoeSizes sizes = moe_sizes(config);
  std::vector<std::vector<double>> compute(p, std::vector<double>(m));
  for (int c = 0; c < p; ++c)
    std::fill(compute[c].begin(), compute[c].end(), expert_compute(routing, c, config, moe, m).seconds);
  TrafficMatrix dispatch = dispatch_matrix(routing, config.hidden, sizes.dispatch);
  prepared.traffic = std::make_unique<TrafficMatrix>(dispatch);
  prepared.job.bytes = dispatch.busiest_load();
  prepared.algorithm = std::make_unique<MoeLayer>(std::move(compute), std::move(dispatch),
                                                  combine_matrix(routing, config.hidden, sizes.combine));
  return routing;
}

// Batches 1..n-1, as many at once as there are cores, in batch order.
std::vector<double> batch_times(PreparedJob& prepared, const MoeConfig& config, const ParamSet& moe, int n,
                                Engine engine) {
  const std::size_t jobs = std::max(1u, std::thread::hardware_concurrency());
  std::vector<double> times;
  std::deque<std::pair<int, ChildRun>> running;
  auto collect = [&] {
    auto [batch, child] = running.front();
    running.pop_front();
    const auto time = child.finish();
    if (!time || *time < 0) {
      for (auto& other : running) other.second.finish();
      throw SimulationError("MoE batch " + std::to_string(batch) + " failed to simulate");
    }
    times.push_back(*time);
  };
  for (int b = 1; b < n; ++b) {
    if (running.size() >= jobs) collect();
    running.emplace_back(b, ChildRun::start([&, b] {  // its layer time; -1 if it did not verify
                           install_batch(prepared, config, moe, b);
                           RunOptions options;
                           options.engine = engine;
                           const SimResult result = simulate(prepared, options);
                           return result.verdict.wrong == 0 ? result.time_s : -1.0;
                         }));
  }
  while (!running.empty()) collect();
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

}  // namespace

nlohmann::ordered_json run_moe(const MoeRunRequest& request) {
  const MoeConfig& config = request.config;
  config.validate();
  // The overrides the topology and the model do not declare are the chip's, energy's and price's.
  CollectiveJob job{config.topology,
                    "alltoallv",
                    "direct",
                    1,
                    config.dispatch_dtype,
                    config.seed,
                    ParamSet(chip_params()).apply_known(config.overrides)};
  const Engine engine = parse_engine(request.engine);
  PreparedJob prepared = prepare(job);
  const int p = prepared.p();
  const Topology& topology = *prepared.topology;
  const ParamSet moe = with_params(topology.params(), chip_params(), config.overrides);

  // Further batches first, each in a child (before this process runs its own simulation). The uniform
  // router routes every batch alike: one simulation stands for all.
  std::vector<double> times;
  if (config.router == "random") times = batch_times(prepared, config, moe, config.batches, engine);

  const MoeRouting routing = install_batch(prepared, config, moe, 0);
  const TrafficMatrix dispatch = *prepared.traffic;
  const MoeSizes sizes = moe_sizes(config);
  const TrafficMatrix combine = combine_matrix(routing, config.hidden, sizes.combine);
  if (!request.traffic.empty()) {
    nlohmann::json rows = nlohmann::json::array();
    for (int s = 0; s < p; ++s) {
      rows.push_back(nlohmann::json::array());
      for (int d = 0; d < p; ++d) rows.back().push_back(dispatch.bytes(s, d));
    }
    OutputFile out(request.traffic, "traffic matrix");
    out << json_text(nlohmann::json{{"description", "MoE dispatch, bytes, row = sender"}, {"bytes", rows}})
        << "\n";
    out.close();
  }
  std::unique_ptr<OutputFile> trace;
  if (!request.trace.empty()) trace = std::make_unique<OutputFile>(request.trace, "trace");

  RunOptions options;
  options.engine = engine;
  options.record = true;  // the traffic check and the phases read the records
  const SimResult result = simulate(prepared, options);
  const double time = result.time_s;
  if (config.router != "random") times.assign(config.batches - 1, time);
  times.insert(times.begin(), time);

  std::string first_error = result.verdict.first_error;
  const std::uint64_t wrong = result.verdict.wrong + check_traffic(result, dispatch, combine, first_error);

  // Phases: the last dispatch delivery; the busiest chip's expert time; combine from first start to
  // last delivery.
  double dispatch_end = 0, combine_start = time, combine_end = 0;
  for (const auto& x : result.transfer_records) {
    if (is_combine_step(x.step)) {
      combine_start = std::min(combine_start, x.start);
      combine_end = std::max(combine_end, x.end);
    } else {
      dispatch_end = std::max(dispatch_end, x.end);
    }
  }
  int straggler = 0;
  std::vector<ExpertCompute> experts(p);
  for (int c = 0; c < p; ++c) {
    experts[c] = expert_compute(routing, c, config, moe, config.micro_chunks);
    if (experts[c].seconds > experts[straggler].seconds) straggler = c;
  }
  const double expert_s = experts[straggler].seconds * config.micro_chunks;
  double max_copies = 0, total_copies = 0;
  int busiest = 0;
  for (int c = 0; c < p; ++c) {
    const auto copies = static_cast<double>(routing.copies_on(c));
    total_copies += copies;
    if (copies > max_copies) max_copies = copies, busiest = c;
  }
  const RecordPaths paths(*prepared.routes, prepared.faults);
  const double carried = static_cast<double>(link_bytes(paths, result.transfer_records));
  std::uint64_t dispatch_bytes = 0, combine_bytes = 0;
  for (int s = 0; s < p; ++s)
    for (int d = 0; d < p; ++d)
      if (s != d) dispatch_bytes += dispatch.bytes(s, d), combine_bytes += combine.bytes(s, d);

  const double tokens = static_cast<double>(config.tokens_per_chip) * p;
  const int switches = static_cast<int>(topology.switches().size());
  const double energy = workload_energy_j(moe, p, switches, time, carried);
  const double cost = workload_cost_usd(moe, p, time);
  auto optional = [](bool has, double v) {
    return has ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
  };

  nlohmann::ordered_json out;
  out["schema_version"] = kSchemaVersion;
  out["version"] = ultrasim_version();
  out["command"] = request.command;
  out["workload"] = "moe";
  out["topology"] = config.topology;
  out["chips"] = p;
  out["experts"] = config.experts;
  out["top_k"] = config.top_k;
  out["tokens_per_chip"] = config.tokens_per_chip;
  out["hidden"] = config.hidden;
  out["ffn"] = config.ffn == 0 ? config.hidden : config.ffn;
  out["router"] = config.router;
  out["zipf"] = config.expert_load.empty() ? nlohmann::ordered_json(config.zipf) : nlohmann::ordered_json();
  out["expert_load"] = config.expert_load.empty() ? nlohmann::ordered_json()
                                                  : nlohmann::ordered_json(config.expert_load_source);
  out["capacity_factor"] = optional(config.capacity_factor.has_value(), config.capacity_factor.value_or(0));
  out["capacity_tokens"] =
      routing.capacity ? nlohmann::ordered_json(*routing.capacity) : nlohmann::ordered_json();
  out["dedup"] = config.dedup;
  out["dispatch_dtype"] = config.dispatch_dtype;
  out["combine_dtype"] = config.combine_dtype;
  out["weight_dtype"] = config.weight_dtype;
  out["micro_chunks"] = config.micro_chunks;
  out["replicate_hot"] = config.replicate_hot;
  out["replicas"] = config.replicas;
  out["batches"] = config.batches;
  out["seed"] = config.seed;
  out["layer_time_s"] = time;
  out["model_s"] = prepared.algorithm->model_s(prepared.cost_input());
  out["dispatch_s"] = dispatch_end;
  out["expert_s"] = expert_s;
  out["combine_s"] = combine_end > 0 ? combine_end - combine_start : 0.0;
  out["layer_time_p50_s"] = percentile(times, 0.50);
  out["layer_time_p99_s"] = percentile(times, 0.99);
  out["layer_time_max_s"] = *std::max_element(times.begin(), times.end());
  out["batch_times_s"] = times;
  out["tokens"] = static_cast<std::uint64_t>(tokens);
  out["tokens_per_s"] = time > 0 ? nlohmann::ordered_json(tokens / time) : nlohmann::ordered_json();
  out["routed_copies"] = routing.routed;
  out["dropped_tokens"] = routing.dropped;
  out["dropped_fraction"] = routing.routed ? static_cast<double>(routing.dropped) / routing.routed : 0.0;
  out["imbalance"] = total_copies > 0 ? max_copies / (total_copies / p) : 1.0;
  out["busiest_chip"] = busiest;
  out["busiest_chip_copies"] = static_cast<std::uint64_t>(max_copies);
  out["straggler_chip"] = straggler;
  out["straggler_bound"] = experts[straggler].memory_bound ? "memory" : "compute";
  out["straggler_flops"] = experts[straggler].flops * config.micro_chunks;
  out["straggler_hbm_bytes"] = experts[straggler].bytes * config.micro_chunks;
  out["dispatch_bytes"] = dispatch_bytes;
  out["combine_bytes"] = combine_bytes;
  out["busiest_dispatch_bytes"] = dispatch.busiest_load();
  out["link_bytes"] = carried;
  out["energy_j"] = energy;
  out["tokens_per_j"] = energy > 0 ? nlohmann::ordered_json(tokens / energy) : nlohmann::ordered_json();
  out["cost_usd"] = cost;
  out["cost_per_mtok_usd"] = cost / tokens * 1e6;
  out["verified"] = wrong == 0;
  out["wrong"] = wrong;
  if (wrong > 0) out["first_error"] = first_error;
  out["transfers"] = result.transfers;
  out["engine"] = engine_name(result.engine);
  out["parameters"] = nlohmann::ordered_json::parse(json_text(moe.to_json()));

  if (trace) {  // its utilisation counters need the rates: the statistics only here
    const LinkStats links =
        compute_link_stats(topology, paths, prepared.faults, result.transfer_records, time);
    write_chrome_trace(*trace, prepared, result, &links, nlohmann::json::parse(json_text(out)),
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
          }};
}

}  // namespace ultrasim
