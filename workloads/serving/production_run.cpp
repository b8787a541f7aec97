#include "workloads/serving/production_run.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

#include "sim/analysis/report.hpp"
#include "sim/machine/chip_model.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/progress.hpp"
#include "topology/base/units.hpp"
#include "workloads/serving/arrival_deployment.hpp"
#include "workloads/serving/serving_run.hpp"
#include "workloads/workload_file.hpp"
#include "workloads/workload_metrics.hpp"

namespace ultrasim {

void ProductionConfig::share_requests() {
  RequestGenerator& g = generator;
  g.input_len = serving.input_len, g.output_len = serving.output_len, g.lengths = serving.lengths;
  g.seed = serving.seed;
}

void ProductionConfig::validate() const {
  serving.validate();
  if (capacity) {
    search.validate();
    RequestGenerator shape = generator;
    shape.rate = 1;  // the search sets it
    if (requests_file.empty()) shape.validate();
  } else if (requests_file.empty()) {
    generator.validate();
  }
  const bool two = scheduler_entry(scheduler).pools == 2;
  if (prefill_chips != 0 && prefill_share != 0)
    throw InputError("--prefill-chips and --prefill-share are exclusive: a count, or a share of the chips");
  if (two && prefill_chips < 1 && prefill_share == 0)
    throw InputError(
        "--scheduler disaggregated needs --prefill-chips N or --prefill-share F (the first chips prefill)");
  if (!two && (prefill_chips != 0 || prefill_tp != 0 || prefill_share != 0))
    throw InputError("--prefill-chips, --prefill-share and --prefill-tp are for --scheduler disaggregated");
  if (serving.pp != 1)
    throw InputError("--pp with request arrivals: iterations do not pipeline yet; use --pp 1");
  if (serving.micro_batches != 1)
    throw InputError("--micro-batches 2 with request arrivals is not modelled yet");
  if (serving.draft_tokens != 0) throw InputError("--draft-tokens with request arrivals is not modelled yet");
  if (serving.batch_sizes != std::vector<std::uint64_t>{1})
    throw InputError("--batch is for static batches without arrivals; with arrivals, --max-batch");
}

void stats_json(nlohmann::ordered_json& out, const std::string& name, std::vector<double> v) {
  using json = nlohmann::ordered_json;
  if (v.empty()) {
    for (const char* k : {"mean_", "median_", "p90_", "p99_"}) out[k + name + "_s"] = json();
    return;
  }
  double sum = 0;
  for (const double x : v) sum += x;
  out["mean_" + name + "_s"] = sum / static_cast<double>(v.size());
  std::sort(v.begin(), v.end());
  auto rank = [&](double q) { return percentile_of_sorted(v, q); };
  out["median_" + name + "_s"] = rank(0.5);
  out["p90_" + name + "_s"] = rank(0.9);
  out["p99_" + name + "_s"] = rank(0.99);
}

// The latencies, throughput and goodput of a schedule (vLLM's serving benchmark's names, in seconds).
void metrics_json(nlohmann::ordered_json& out, const ProductionConfig& config,
                  const std::vector<ServingRequest>& requests, const ServingSchedule& s) {
  std::vector<double> ttft, tpot, e2el;
  double input = 0, output = 0, end = 0;
  std::uint64_t good = 0, preemptions = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const RequestTimes& t = s.requests[i];
    const double first = t.first_token_s - t.arrival_s, life = t.finish_s - t.arrival_s;
    ttft.push_back(first), e2el.push_back(life);
    const double per_token =
        requests[i].output > 1 ? (t.finish_s - t.first_token_s) / static_cast<double>(requests[i].output - 1)
                               : 0;
    if (requests[i].output > 1) tpot.push_back(per_token);
    if ((config.slo_ttft == 0 || first <= config.slo_ttft) &&
        (config.slo_tpot == 0 || per_token <= config.slo_tpot))
      ++good;
    input += static_cast<double>(requests[i].prompt), output += static_cast<double>(requests[i].output);
    end = std::max(end, t.finish_s), preemptions += t.preemptions;
  }
  const double duration = end - requests.front().arrival_s;
  auto per_s = [&](double x) { return duration > 0 ? x / duration : 0.0; };
  out["completed"] = requests.size();
  out["duration_s"] = duration;
  out["total_input_tokens"] = input;
  out["total_output_tokens"] = output;
  out["request_throughput"] = per_s(static_cast<double>(requests.size()));
  out["output_throughput"] = per_s(output);
  out["total_token_throughput"] = per_s(input + output);
  const bool slo = config.slo_ttft > 0 || config.slo_tpot > 0;
  out["slo_ttft_s"] =
      config.slo_ttft > 0 ? nlohmann::ordered_json(config.slo_ttft) : nlohmann::ordered_json();
  out["slo_tpot_s"] =
      config.slo_tpot > 0 ? nlohmann::ordered_json(config.slo_tpot) : nlohmann::ordered_json();
  out["request_goodput"] =
      slo ? nlohmann::ordered_json(per_s(static_cast<double>(good))) : nlohmann::ordered_json();
  out["good_fraction"] =
      slo ? nlohmann::ordered_json(static_cast<double>(good) / static_cast<double>(requests.size()))
          : nlohmann::ordered_json();
  stats_json(out, "ttft", ttft);
  stats_json(out, "tpot", tpot);
  stats_json(out, "itl", s.itl_s);
  stats_json(out, "e2el", e2el);
  out["preemptions"] = preemptions;
}

namespace {

void write_timeline(const std::string& path, const std::vector<PoolSim>& pools, const ServingSchedule& s) {
  OutputFile file(path, "timeline");
  file << "pool,start_s,end_s,requests,prefill_tokens,decode_tokens,kv_blocks,kv_use,preempted\n";
  for (const ServingIteration& it : s.iterations) {
    const PoolSim& p = pools[static_cast<std::size_t>(it.pool)];
    const double total = static_cast<double>(p.kv_blocks) * p.stepper->layout().dp;
    file << p.name << "," << shortest_number(it.start_s) << "," << shortest_number(it.end_s) << ","
         << std::to_string(it.requests) << "," << std::to_string(it.prefill_tokens) << ","
         << std::to_string(it.decode_tokens) << "," << std::to_string(it.kv_blocks) << ","
         << shortest_number(static_cast<double>(it.kv_blocks) / total) << "," << std::to_string(it.preempted)
         << "\n";
  }
  file.close();
}

// Every request: its lengths, times and latencies (what latency CDFs are drawn from).
void write_requests(const std::string& path, const std::vector<ServingRequest>& requests,
                    const ServingSchedule& s) {
  OutputFile file(path, "request times");
  file << "request,arrival_s,prompt_tokens,output_tokens,first_token_s,finish_s,ttft_s,tpot_s,e2el_s,"
          "preemptions,group\n";
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const RequestTimes& t = s.requests[i];
    const ServingRequest& r = requests[i];
    const std::string tpot =
        r.output > 1 ? shortest_number((t.finish_s - t.first_token_s) / static_cast<double>(r.output - 1))
                     : "";
    file << std::to_string(i) << "," << shortest_number(t.arrival_s) << "," << std::to_string(r.prompt) << ","
         << std::to_string(r.output) << "," << shortest_number(t.first_token_s) << ","
         << shortest_number(t.finish_s) << "," << shortest_number(t.first_token_s - t.arrival_s) << ","
         << tpot << "," << shortest_number(t.finish_s - t.arrival_s) << "," << std::to_string(t.preemptions)
         << "," << std::to_string(t.group) << "\n";
  }
  file.close();
}

// Perfetto: a track per request (waiting for its first token, then decoding) and per pool (its iterations,
// with counters of the batch and the KV blocks held).
void write_production_trace(const std::string& path, const std::vector<PoolSim>& pools,
                            const ServingSchedule& s) {
  OutputFile file(path, "trace");
  auto us = [](double t) { return shortest_number(t * 1e6); };
  file << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  file << R"({"ph":"M","pid":0,"name":"process_name","args":{"name":"requests"}})";
  for (std::size_t p = 0; p < pools.size(); ++p)
    file << ",\n{\"ph\":\"M\",\"pid\":" << std::to_string(p + 1)
         << R"(,"name":"process_name","args":{"name":")" << pools[p].name << " pool\"}}";
  for (std::size_t i = 0; i < s.requests.size(); ++i) {
    const RequestTimes& t = s.requests[i];
    const std::string tid = std::to_string(i);
    file << ",\n{\"ph\":\"X\",\"pid\":0,\"tid\":" << tid
         << ",\"name\":\"until first token\",\"ts\":" << us(t.arrival_s)
         << ",\"dur\":" << us(t.first_token_s - t.arrival_s) << "}";
    file << ",\n{\"ph\":\"X\",\"pid\":0,\"tid\":" << tid
         << ",\"name\":\"decode\",\"ts\":" << us(t.first_token_s)
         << ",\"dur\":" << us(t.finish_s - t.first_token_s)
         << ",\"args\":{\"preemptions\":" << std::to_string(t.preemptions) << "}}";
  }
  for (const ServingIteration& it : s.iterations) {
    const std::string pid = std::to_string(it.pool + 1);
    file << ",\n{\"ph\":\"X\",\"pid\":" << pid
         << ",\"tid\":0,\"name\":\"iteration\",\"ts\":" << us(it.start_s)
         << ",\"dur\":" << us(it.end_s - it.start_s)
         << ",\"args\":{\"requests\":" << std::to_string(it.requests)
         << ",\"prefill_tokens\":" << std::to_string(it.prefill_tokens)
         << ",\"decode_tokens\":" << std::to_string(it.decode_tokens) << "}}";
    file << ",\n{\"ph\":\"C\",\"pid\":" << pid << ",\"name\":\"batch\",\"ts\":" << us(it.start_s)
         << ",\"args\":{\"requests\":" << std::to_string(it.requests)
         << ",\"kv_blocks\":" << std::to_string(it.kv_blocks) << "}}";
  }
  file << "\n]}\n";
  file.close();
}

}  // namespace

std::optional<ProductionConfig> production_config_from_json(const nlohmann::json& w,
                                                            const std::string& file) {
  if (!w.is_object() || (!w.contains("requests") && !w.contains("rate") && !w.contains("capacity")))
    return std::nullopt;
  const std::string where = "workload file '" + file + "'";
  nlohmann::json serving = w, arrivals = nlohmann::json::object();
  for (const auto& o : production_options())
    if (w.contains(o.name)) arrivals[o.name] = w.at(o.name), serving.erase(o.name);
  std::vector<std::string> fields;
  for (const auto& [name, value] : serving.items()) fields.push_back(name);
  if (const std::string refusal = static_only_refusal(fields, arrivals.contains("requests"), false);
      !refusal.empty())
    throw InputError(where + ": " + refusal);
  ProductionConfig p;
  p.serving = serving_config_from_json(serving, file);
  read_options(production_options(), arrivals, where, {}, p);
  p.share_requests();
  with_context(where, [&] { p.validate(); });
  return p;
}

void arrivals_config_json(nlohmann::ordered_json& out, const ProductionConfig& config,
                          const SchedulerOptions& options, const ServingStepper& main) {
  using json = nlohmann::ordered_json;
  out["model"] = model_json(main.config().model);
  out["chip"] = main.profile().name;
  out["scheduler"] = config.scheduler;
  out["requests"] = config.requests_file.empty() ? json() : json(config.requests_file);
  out["request_rate"] = config.requests_file.empty() ? json(config.generator.rate) : json();
  out["burstiness"] = config.requests_file.empty() ? json(config.generator.burstiness) : json();
  out["max_batch"] = options.max_batch;
  out["token_budget"] = options.token_budget;
  out["step_model"] = config.exact_steps ? json("exact") : json("grid");
}

nlohmann::ordered_json run_production(const ProductionConfig& config, const std::string& command,
                                      const std::string& trace) {
  config.validate();
  const std::vector<ServingRequest> requests = config.requests_file.empty()
                                                   ? generate_requests(config.generator)
                                                   : read_request_trace(config.requests_file);
  ArrivalDeployment deployment(config);
  const ServingSchedule schedule = [&] {
    Progress progress("serve: requests finished", requests.size());
    return deployment.serve(requests, &progress);
  }();
  using json = nlohmann::ordered_json;
  json out = workload_result(command, "serving", config.serving.topology, deployment.chips());
  arrivals_config_json(out, config, deployment.options(), deployment.main());
  metrics_json(out, config, requests, schedule);
  const double duration = out["duration_s"].get<double>(), tokens = out["total_output_tokens"].get<double>();
  Energy energy;
  double cost = 0;
  out["pools"] = pools_json(deployment, schedule, duration, energy, cost);
  out["kv_transfer_bytes"] = deployment.transfer_bytes();
  double transfer_s = 0;
  for (const RequestTimes& t : schedule.requests) transfer_s += t.kv_transfer_s;
  out["mean_kv_transfer_s"] =
      deployment.pools().size() == 2 ? json(transfer_s / static_cast<double>(requests.size())) : json();
  energy_cost_json(out, energy, cost, tokens, duration, deployment.chips());
  if (!config.timeline.empty()) write_timeline(config.timeline, deployment.pools(), schedule);
  if (!config.per_request.empty()) write_requests(config.per_request, requests, schedule);
  if (!trace.empty()) write_production_trace(trace, deployment.pools(), schedule);
  close_arrivals_result(out, deployment);
  return out;
}

void energy_cost_json(nlohmann::ordered_json& out, const Energy& energy, double cost, double tokens,
                      double duration, int chips) {
  out["energy_per_token_j"] = tokens > 0 ? energy.node() / tokens : 0.0;
  out["energy_per_token_chips_j"] = tokens > 0 ? energy.chips / tokens : 0.0;
  out["energy_per_token_facility_j"] = tokens > 0 ? energy.facility() / tokens : 0.0;
  out["chip_power_w"] = duration > 0 && chips > 0 ? energy.chips / (duration * chips) : 0.0;
  out["cost_per_mtok_usd"] = tokens > 0 ? cost / tokens * 1e6 : 0.0;
}

void close_arrivals_result(nlohmann::ordered_json& out, const ArrivalDeployment& deployment) {
  SimResult summary;
  summary.engine = parse_engine(deployment.main().engine());
  std::uint64_t wrong = 0;
  std::string first;
  for (const PoolSim& p : deployment.pools())
    if (p.wrong > 0) wrong += p.wrong, first = first.empty() ? p.first_error : first;
  close_workload_result(out, wrong, first, summary, deployment.main().params());
}

std::string production_table(const nlohmann::ordered_json& r) {
  std::ostringstream out;
  auto ms = [](const nlohmann::ordered_json& v) {
    return v.is_null() ? std::string("-") : fixed_text(v.get<double>() * 1e3, 2);
  };
  out << "# Serving " << r["model"]["name"].get<std::string>() << " on " << r["topology"].get<std::string>()
      << " (" << r["chips"] << " chips of " << r["chip"].get<std::string>() << "), "
      << r["scheduler"].get<std::string>() << " scheduler, " << r["completed"] << " requests, step model "
      << r["step_model"].get<std::string>() << "\n";
  for (const auto& p : r["pools"])
    out << "pool " << p["pool"].get<std::string>() << ": " << p["chips"] << " chips, tp " << p["layout"]["tp"]
        << ", dp " << p["layout"]["dp"] << ", " << p["iterations"] << " iterations, mean batch "
        << fixed_text(p["mean_batch"].get<double>(), 1) << ", busy "
        << fixed_text(p["busy_fraction"].get<double>() * 100, 1) << " %, max KV use "
        << fixed_text(p["max_kv_use"].get<double>() * 100, 1) << " %\n";
  out << "latency ms     mean   median      p90      p99\n";
  for (const char* k : {"ttft", "tpot", "itl", "e2el"}) {
    std::string row = k;
    row.resize(10, ' ');
    for (const char* q : {"mean_", "median_", "p90_", "p99_"}) {
      const std::string v = ms(r[std::string(q) + k + "_s"]);
      row += std::string(v.size() < 9 ? 9 - v.size() : 0, ' ') + v;
    }
    out << row << "\n";
  }
  out << "duration " << fixed_text(r["duration_s"].get<double>(), 3) << " s, "
      << fixed_text(r["request_throughput"].get<double>(), 3) << " requests/s, "
      << fixed_text(r["output_throughput"].get<double>(), 1) << " output tokens/s, " << r["preemptions"]
      << " preemptions\n";
  if (!r["request_goodput"].is_null())
    out << "goodput " << fixed_text(r["request_goodput"].get<double>(), 3) << " requests/s ("
        << fixed_text(r["good_fraction"].get<double>() * 100, 1) << " % within TTFT " << ms(r["slo_ttft_s"])
        << " ms, TPOT " << ms(r["slo_tpot_s"]) << " ms)\n";
  out << fixed_text(r["energy_per_token_j"].get<double>(), 4) << " J/token, "
      << fixed_text(r["cost_per_mtok_usd"].get<double>(), 3) << " USD per million output tokens\n";
  out << "verified " << (r["verified"].get<bool>() ? "yes" : "NO") << "\n";
  return out.str();
}

}  // namespace ultrasim
