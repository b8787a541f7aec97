#include "workloads/serving/capacity_run.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/machine/chip_model.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/progress.hpp"
#include "topology/base/units.hpp"
#include "workloads/serving/arrival_deployment.hpp"
#include "workloads/workload_file.hpp"

namespace ultrasim {
namespace {

using json = nlohmann::ordered_json;

json trial_json(const CapacityTrial& t) {
  return {{"request_rate", t.rate},
          {"requests", t.requests},
          {"attainment", t.attainment},
          {"ttft_attainment", t.ttft_attainment},
          {"tpot_attainment", t.tpot_attainment},
          {"margin", t.margin},
          {"margin_error", t.margin_error},
          {"queue_growth", t.queue_growth},
          {"median_ttft_s", t.p50_ttft_s},
          {"p90_ttft_s", t.p90_ttft_s},
          {"p99_ttft_s", t.p99_ttft_s},
          {"median_tpot_s", t.p50_tpot_s},
          {"p90_tpot_s", t.p90_tpot_s},
          {"p99_tpot_s", t.p99_tpot_s},
          {"sustained", t.sustained},
          {"meets", t.meets},
          {"fails", t.fails}};
}

void write_curve(const std::string& path, const CapacityResult& r) {
  OutputFile file(path, "capacity curve");
  file << "request_rate,attainment,ttft_attainment,tpot_attainment,median_ttft_s,p90_ttft_s,p99_ttft_s,"
          "median_tpot_s,p90_tpot_s,p99_tpot_s,queue_growth,sustained,meets,fails\n";
  for (const CapacityTrial& t : r.curve)
    file << shortest_number(t.rate) << "," << shortest_number(t.attainment) << ","
         << shortest_number(t.ttft_attainment) << "," << shortest_number(t.tpot_attainment) << ","
         << shortest_number(t.p50_ttft_s) << "," << shortest_number(t.p90_ttft_s) << ","
         << shortest_number(t.p99_ttft_s) << "," << shortest_number(t.p50_tpot_s) << ","
         << shortest_number(t.p90_tpot_s) << "," << shortest_number(t.p99_tpot_s) << ","
         << shortest_number(t.queue_growth) << "," << (t.sustained ? "true" : "false") << ","
         << (t.meets ? "true" : "false") << "," << t.fails << "\n";
  file.close();
}

// Trials a search of this precision usually takes: a few to bracket, then the bisections.
std::size_t expected_trials(double precision) {
  return 5 + static_cast<std::size_t>(std::ceil(std::log2(std::log(2.0) / std::log1p(precision))));
}

}  // namespace

json run_capacity(const ProductionConfig& config, const std::string& command) {
  config.validate();
  ArrivalDeployment deployment(config);
  const TraceShape shape = config.requests_file.empty()
                               ? generated_shape(config.generator)
                               : trace_shape(read_request_trace(config.requests_file));
  CapacityOptions o = config.search;
  o.slo_ttft = config.slo_ttft, o.slo_tpot = config.slo_tpot;
  const Deployment serve = [&](const std::vector<ServingRequest>& r) { return deployment.serve(r); };
  CapacityResult r;
  {
    Progress progress("capacity: trial rates", expected_trials(o.precision));
    r = find_capacity(shape, serve, o, [&](const CapacityTrial&) { progress.advance(); });
  }
  // The trial at capacity again, for what the deployment spent in its window.
  const CapacityTrial& c = r.at_capacity();
  const TrialSize size = trial_size(o, r.rate, r.unloaded_e2el_s);
  const std::vector<ServingRequest> requests = shape(r.rate, size.warm + size.window + size.warm);
  const ServingSchedule schedule = deployment.serve(requests);
  const double tokens_per_s = c.output_tokens / static_cast<double>(c.measured) * r.rate;
  const double seconds = c.window_end_s - c.window_start_s;
  const Energy energy = window_energy(deployment, schedule, c.window_start_s, c.window_end_s);
  double cost_per_s = 0;
  for (const PoolSim& p : deployment.pools())
    cost_per_s += workload_cost_usd(p.stepper->params(), p.stepper->layout().chips, 1.0);

  const int chips = deployment.chips();
  json out = workload_result(command, "serving", config.serving.topology, chips);
  arrivals_config_json(out, config, deployment.options(), deployment.main());
  out.erase("request_rate");
  out["capacity_request_rate"] = r.rate;
  out["capacity_request_rate_low"] = r.rate_low;
  out["capacity_request_rate_high"] = r.rate_high;
  out["capacity_output_throughput"] = tokens_per_s;
  out["capacity_request_rate_per_chip"] = r.rate / chips;
  out["capacity_output_throughput_per_chip"] = tokens_per_s / chips;
  out["saturated_request_rate"] = std::isfinite(r.saturated_rate) ? json(r.saturated_rate) : json();
  out["binding"] = r.binding;
  out["failing_request_rate"] = r.failing_rate;
  out["slo_ttft_s"] = o.slo_ttft > 0 ? json(o.slo_ttft) : json();
  out["slo_tpot_s"] = o.slo_tpot > 0 ? json(o.slo_tpot) : json();
  out["attainment_target"] = o.attainment;
  out["attainment_of"] = o.attainment_of;
  out["attainment"] = c.attainment;
  out["unloaded_ttft_s"] = r.unloaded_ttft_s;
  out["unloaded_tpot_s"] = r.unloaded_tpot_s;
  out["window_requests"] = size.window;
  out["warmup_requests"] = size.warm;
  out["capacity_precision"] = o.precision;
  const json at_capacity = trial_json(c);
  for (const char* k :
       {"median_ttft_s", "p90_ttft_s", "p99_ttft_s", "median_tpot_s", "p90_tpot_s", "p99_tpot_s"})
    out[k] = at_capacity[k];
  energy_cost_json(out, energy, cost_per_s * seconds, tokens_per_s * seconds, seconds, chips);
  double duration = 0;  // the trial's, first arrival to last token
  for (const RequestTimes& t : schedule.requests) duration = std::max(duration, t.finish_s);
  Energy whole;
  double whole_cost = 0;
  out["pools"] = pools_json(deployment, schedule, duration, whole, whole_cost);
  json curve = json::array();
  for (const CapacityTrial& t : r.curve) curve.push_back(trial_json(t));
  out["trials"] = r.curve.size();
  out["curve"] = curve;
  if (!config.curve.empty()) write_curve(config.curve, r);
  close_arrivals_result(out, deployment);
  return out;
}

std::string capacity_table(const json& r) {
  std::ostringstream out;
  auto ms = [](const json& v) {
    return v.is_null() ? std::string("-") : fixed_text(v.get<double>() * 1e3, 2);
  };
  const double rate = r["capacity_request_rate"].get<double>();
  out << "# Capacity of " << r["model"]["name"].get<std::string>() << " on "
      << r["topology"].get<std::string>() << " (" << r["chips"] << " chips of "
      << r["chip"].get<std::string>() << "), " << r["scheduler"].get<std::string>() << " scheduler\n";
  out << "SLOs: TTFT " << ms(r["slo_ttft_s"]) << " ms, TPOT " << ms(r["slo_tpot_s"]) << " ms, "
      << fixed_text(r["attainment_target"].get<double>() * 100, 1) << " % of requests ("
      << r["attainment_of"].get<std::string>() << "); unloaded TTFT " << ms(r["unloaded_ttft_s"])
      << " ms, TPOT " << ms(r["unloaded_tpot_s"]) << " ms\n";
  out << "rate req/s  attainment  p99 TTFT ms  p99 TPOT ms  queue growth  meets the SLOs\n";
  for (const auto& t : r["curve"]) {
    std::ostringstream row;
    auto cell = [&row](const std::string& v, std::size_t w) {
      row << std::string(v.size() < w ? w - v.size() : 0, ' ') << v;
    };
    cell(fixed_text(t["request_rate"].get<double>(), 3), 10);
    cell(fixed_text(t["attainment"].get<double>() * 100, 1) + " %", 12);
    cell(ms(t["p99_ttft_s"]), 13), cell(ms(t["p99_tpot_s"]), 13);
    cell(fixed_text(t["queue_growth"].get<double>(), 1), 14);
    row << "  " << (t["meets"].get<bool>() ? "yes" : "no: " + t["fails"].get<std::string>());
    out << row.str() << "\n";
  }
  out << "capacity " << fixed_text(rate, 3) << " requests/s (95 % interval "
      << fixed_text(r["capacity_request_rate_low"].get<double>(), 3) << " - "
      << fixed_text(r["capacity_request_rate_high"].get<double>(), 3) << "), "
      << fixed_text(r["capacity_output_throughput"].get<double>(), 1) << " output tokens/s; per chip "
      << fixed_text(r["capacity_request_rate_per_chip"].get<double>(), 4) << " requests/s, "
      << fixed_text(r["capacity_output_throughput_per_chip"].get<double>(), 2) << " output tokens/s\n";
  out << "binds: " << r["binding"].get<std::string>() << " (fails at "
      << fixed_text(r["failing_request_rate"].get<double>(), 3) << " requests/s)\n";
  out << "at capacity: " << fixed_text(r["cost_per_mtok_usd"].get<double>(), 3)
      << " USD per million output tokens, " << fixed_text(r["energy_per_token_j"].get<double>(), 4)
      << " J/token\n";
  out << "verified " << (r["verified"].get<bool>() ? "yes" : "NO") << "\n";
  return out.str();
}

}  // namespace ultrasim
