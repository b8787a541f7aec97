#include "workloads/experiments/plan.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "workloads/serving/schedulers/scheduler.hpp"

namespace ultrasim {

void PlanSpec::validate() const {
  if (topologies.empty() || tps.empty() || schedulers.empty())
    throw InputError("plan: --topology, --tp and --scheduler each need at least one value");
  for (const auto& s : schedulers)
    with_context("plan: --scheduler", [&] { return scheduler_entry(s).pools; });
  for (const int tp : tps)
    if (tp < 1 || tp > 4096) throw InputError("plan: --tp values must be between 1 and 4096");
  for (const double f : prefill_shares)
    if (!(f > 0 && f < 1)) throw InputError("plan: --prefill-share values must be in (0, 1)");
  for (const auto& s : schedulers)
    if (prefill_shares.empty() && scheduler_entry(s).pools == 2)
      throw InputError("plan: the " + s + " scheduler needs at least one --prefill-share");
  if (!(attainment > 0 && attainment <= 1)) throw InputError("plan: --attainment must be in (0, 1]");
  if (!base.contains("slo_ttft") || !base.contains("slo_tpot"))
    throw InputError("plan: give both SLOs, --slo-ttft and --slo-tpot");
  if (capacity && !(target_rate > 0 && target_rate <= 1e9))
    throw InputError(
        "plan --capacity: the target rate (--rate, or the trace's) must be in (0, 1e9] requests/s");
  if (capacity && (max_replicas < 1 || max_replicas > 1000000))
    throw InputError("plan: --max-replicas must be between 1 and 1000000");
}

SweepSpec plan_sweep(const PlanSpec& spec) {
  spec.validate();
  SweepSpec sweep;
  sweep.workload = "serving";
  sweep.base = spec.base;
  sweep.base["workload"] = "serving";
  for (const auto& topology : spec.topologies)
    for (const int tp : spec.tps)
      for (const auto& scheduler : spec.schedulers) {
        nlohmann::ordered_json c{{"topology", topology}, {"tp", tp}, {"scheduler", scheduler}};
        if (scheduler_entry(scheduler).pools == 1) {  // one pool: no prefill share to search
          sweep.cases.push_back(c);
          continue;
        }
        for (const double share : spec.prefill_shares) {
          c["prefill_share"] = share;
          sweep.cases.push_back(c);
        }
      }
  return sweep;
}

nlohmann::ordered_json plan_sweep_file(const PlanSpec& spec) {
  const SweepSpec s = plan_sweep(spec);
  return {{"workload", "serving"},
          {"description", "ultrasim plan's deployments (rank the rows with ultrasim plan --from)"},
          {"base", s.base},
          {"cases", s.cases}};
}

namespace {

std::string deployment_name(const nlohmann::ordered_json& c) {
  std::string name = c.value("topology", std::string("?")) + " tp " + std::to_string(c.value("tp", 1)) + " " +
                     c.value("scheduler", std::string("continuous"));
  if (c.contains("prefill_share"))
    name += " (prefill " + fixed_text(c["prefill_share"].get<double>() * 100, 0) + " %)";
  return name;
}

double number_or(const nlohmann::ordered_json& row, const char* key, double fallback) {
  return row.contains(key) && row[key].is_number() ? row[key].get<double>() : fallback;
}

nlohmann::ordered_json summary(const nlohmann::ordered_json& row) {
  nlohmann::ordered_json s;
  const nlohmann::ordered_json c = row.value("inputs", nlohmann::ordered_json::object());
  s["deployment"] = deployment_name(c);
  s["case"] = c;
  for (const char* k : {"chips", "good_fraction", "cost_per_mtok_usd", "request_goodput",
                        "request_throughput", "p99_ttft_s", "p99_tpot_s", "energy_per_token_j"})
    s[k] = row.contains(k) ? row[k] : nlohmann::ordered_json();
  return s;
}

}  // namespace

std::string plan_row_problem(const nlohmann::ordered_json& row) {
  if (row.value("status", std::string()) != "ok") return {};
  for (const char* k :
       {"chips", "good_fraction", "cost_per_mtok_usd", "request_goodput", "request_throughput", "p99_ttft_s",
        "p99_tpot_s", "energy_per_token_j", "slo_ttft_s", "slo_tpot_s", "attainment_target",
        "capacity_request_rate", "capacity_request_rate_per_chip", "capacity_output_throughput"}) {
    if (!row.contains(k)) continue;
    const auto& v = row[k];
    if (!v.is_number()) return "'" + std::string(k) + "' is " + std::string(v.type_name()) + ", not a number";
    if (!std::isfinite(v.get<double>()) || v.get<double>() < 0)
      return "'" + std::string(k) + "' is " + v.dump() + ", not a finite number >= 0";
  }
  return {};
}

nlohmann::ordered_json rank_plan(const std::vector<nlohmann::ordered_json>& rows, double attainment,
                                 std::size_t runners_up) {
  std::vector<nlohmann::ordered_json> met, missed, failed;
  double slo_ttft = 0, slo_tpot = 0;
  for (const auto& row : rows) {
    if (row.value("status", std::string()) != "ok" || !row.contains("good_fraction") ||
        !row["good_fraction"].is_number()) {
      nlohmann::ordered_json f = summary(row);
      f["why"] = "failed: " + row.value("error", std::string("no serving result"));
      failed.push_back(f);
      continue;
    }
    slo_ttft = number_or(row, "slo_ttft_s", 0), slo_tpot = number_or(row, "slo_tpot_s", 0);
    (row["good_fraction"].get<double>() >= attainment ? met : missed).push_back(summary(row));
  }
  auto cost = [](const auto& s) { return s["cost_per_mtok_usd"].template get<double>(); };
  auto good = [](const auto& s) { return s["good_fraction"].template get<double>(); };
  std::stable_sort(met.begin(), met.end(), [&](const auto& a, const auto& b) { return cost(a) < cost(b); });
  std::stable_sort(missed.begin(), missed.end(),
                   [&](const auto& a, const auto& b) { return good(a) > good(b); });
  const std::string slos = "TTFT <= " + fixed_text(slo_ttft * 1e3, 1) +
                           " ms and TPOT <= " + fixed_text(slo_tpot * 1e3, 1) + " ms for " +
                           fixed_text(attainment * 100, 0) + " % of requests";
  if (met.empty()) {
    if (missed.empty())
      throw InputError("plan: every deployment failed; the first: " +
                       (failed.empty() ? std::string("no rows") : failed.front()["why"].get<std::string>()));
    throw InputError("plan: no deployment meets " + slos + "; the best reached " +
                     fixed_text(good(missed.front()) * 100, 1) + " % (" +
                     missed.front()["deployment"].get<std::string>() + ")");
  }
  nlohmann::ordered_json out;
  out["attainment"] = attainment, out["slo_ttft_s"] = slo_ttft, out["slo_tpot_s"] = slo_tpot;
  out["deployments"] = rows.size(), out["met"] = met.size(), out["failed"] = failed.size();
  out["best"] = met.front();
  nlohmann::ordered_json lost = nlohmann::ordered_json::array();
  for (std::size_t i = 1; i < met.size() && i <= runners_up; ++i) {
    nlohmann::ordered_json r = met[i];
    r["why"] = "costs " + fixed_text((cost(met[i]) / cost(met.front()) - 1) * 100, 1) + " % more (" +
               fixed_text(cost(met[i]), 3) + " against " + fixed_text(cost(met.front()), 3) + " USD/Mtok)";
    lost.push_back(r);
  }
  for (std::size_t i = 0; i < missed.size() && i < runners_up; ++i) {
    nlohmann::ordered_json r = missed[i];
    r["why"] = "misses the SLOs: " + fixed_text(good(r) * 100, 1) + " % of requests within both (needs " +
               fixed_text(attainment * 100, 0) + " %); p99 TTFT " +
               fixed_text(r["p99_ttft_s"].get<double>() * 1e3, 1) + " ms, p99 TPOT " +
               fixed_text(r["p99_tpot_s"].get<double>() * 1e3, 1) + " ms";
    lost.push_back(r);
  }
  for (const auto& f : failed) lost.push_back(f);
  out["runners_up"] = lost;
  return out;
}

namespace {

// A capacity row's fleet at the target rate, or why it has none.
nlohmann::ordered_json fleet_row(const nlohmann::ordered_json& row, double target, std::uint64_t most) {
  nlohmann::ordered_json s;
  const nlohmann::ordered_json c = row.value("inputs", nlohmann::ordered_json::object());
  s["deployment"] = deployment_name(c);
  s["case"] = c;
  for (const char* k : {"chips", "capacity_request_rate", "capacity_request_rate_per_chip",
                        "capacity_output_throughput", "binding", "cost_per_mtok_usd", "energy_per_token_j"})
    s[k] = row.contains(k) ? row[k] : nlohmann::ordered_json();
  const double capacity = number_or(row, "capacity_request_rate", 0);
  if (row.value("status", std::string()) != "ok" || !(capacity > 0)) {
    const std::string error = row.value("error", std::string("no capacity result"));
    s["why"] = error.find("does not fit") != std::string::npos ? "memory: " + error : "failed: " + error;
    return s;
  }
  const double replicas = std::ceil(target / capacity * (1 - 1e-12));
  s["replicas"] = replicas;
  s["fleet_chips"] = replicas * number_or(row, "chips", 0);
  // One replica at capacity costs cost_per_mtok x its tokens/s; the fleet pays every replica for the
  // target's tokens/s.
  const double tokens_per_request = number_or(row, "capacity_output_throughput", 0) / capacity;
  const double replica_usd_per_s =
      number_or(row, "cost_per_mtok_usd", 0) * capacity * tokens_per_request / 1e6;
  s["fleet_cost_per_mtok_usd"] = replicas * replica_usd_per_s / (target * tokens_per_request) * 1e6;
  if (replicas > static_cast<double>(most))
    s["why"] = "needs " + fixed_text(replicas, 0) + " replicas (at most " + std::to_string(most) + ")";
  return s;
}

}  // namespace

nlohmann::ordered_json rank_fleet(const std::vector<nlohmann::ordered_json>& rows, double target,
                                  std::uint64_t most, std::size_t runners_up) {
  std::vector<nlohmann::ordered_json> met, too_big, failed;
  double slo_ttft = 0, slo_tpot = 0, attainment = 0;
  for (const auto& row : rows) {
    nlohmann::ordered_json s = fleet_row(row, target, most);
    if (!s.contains("why")) {
      slo_ttft = number_or(row, "slo_ttft_s", 0), slo_tpot = number_or(row, "slo_tpot_s", 0);
      attainment = number_or(row, "attainment_target", 0);
    }
    (s.contains("replicas") ? (s.contains("why") ? too_big : met) : failed).push_back(s);
  }
  auto cost = [](const auto& s) { return s["fleet_cost_per_mtok_usd"].template get<double>(); };
  auto capacity = [](const auto& s) { return s["capacity_request_rate"].template get<double>(); };
  std::stable_sort(met.begin(), met.end(), [&](const auto& a, const auto& b) { return cost(a) < cost(b); });
  std::stable_sort(too_big.begin(), too_big.end(),
                   [&](const auto& a, const auto& b) { return capacity(a) > capacity(b); });
  if (met.empty()) {
    if (too_big.empty())
      throw InputError("plan: every deployment failed; the first: " +
                       (failed.empty() ? std::string("no rows") : failed.front()["why"].get<std::string>()));
    const auto& b = too_big.front();
    throw InputError("plan: no fleet of at most " + std::to_string(most) + " replicas serves " +
                     shortest_number(target) + " requests/s; the best reaches " +
                     fixed_text(capacity(b) * static_cast<double>(most), 3) + " requests/s (" +
                     b["deployment"].get<std::string>() + ", " + fixed_text(capacity(b), 3) +
                     " requests/s each)");
  }
  nlohmann::ordered_json out;
  out["target_request_rate"] = target, out["attainment"] = attainment;
  out["slo_ttft_s"] = slo_ttft, out["slo_tpot_s"] = slo_tpot;
  out["deployments"] = rows.size(), out["met"] = met.size(), out["failed"] = failed.size();
  out["best"] = met.front();
  nlohmann::ordered_json lost = nlohmann::ordered_json::array();
  const auto& best = met.front();
  for (std::size_t i = 1; i < met.size() && i <= runners_up; ++i) {
    nlohmann::ordered_json r = met[i];
    const double per_chip = r["capacity_request_rate_per_chip"].get<double>();
    const bool lower = per_chip < best["capacity_request_rate_per_chip"].get<double>();
    r["why"] = "costs " + fixed_text((cost(r) / cost(best) - 1) * 100, 1) + " % more (" +
               fixed_text(cost(r), 3) + " against " + fixed_text(cost(best), 3) +
               " USD/Mtok): " + fixed_text(r["replicas"].get<double>(), 0) + " x " +
               fixed_text(capacity(r), 3) + " requests/s, " + fixed_text(per_chip, 4) + " per chip (" +
               (lower ? "lower" : "higher") + " than the best's), bound by " +
               r["binding"].get<std::string>();
    lost.push_back(r);
  }
  for (std::size_t i = 0; i < too_big.size() && i < runners_up; ++i) lost.push_back(too_big[i]);
  for (const auto& f : failed) lost.push_back(f);
  out["runners_up"] = lost;
  return out;
}

std::string fleet_table(const nlohmann::ordered_json& a) {
  std::ostringstream out;
  const auto& b = a["best"];
  out << "# " << a["deployments"] << " deployments sized to "
      << shortest_number(a["target_request_rate"].get<double>())
      << " requests/s within TTFT <= " << fixed_text(a["slo_ttft_s"].get<double>() * 1e3, 1)
      << " ms and TPOT <= " << fixed_text(a["slo_tpot_s"].get<double>() * 1e3, 1) << " ms for "
      << fixed_text(a["attainment"].get<double>() * 100, 0) << " % of requests; " << a["failed"]
      << " failed\n";
  out << "best: " << fixed_text(b["replicas"].get<double>(), 0) << " x " << b["deployment"].get<std::string>()
      << " (" << fixed_text(b["fleet_chips"].get<double>(), 0)
      << " chips): " << fixed_text(b["fleet_cost_per_mtok_usd"].get<double>(), 3)
      << " USD per million output tokens at the target; each replica's capacity "
      << fixed_text(b["capacity_request_rate"].get<double>(), 3) << " requests/s (bound by "
      << b["binding"].get<std::string>() << ")\n";
  for (const auto& r : a["runners_up"])
    out << "  " << r["deployment"].get<std::string>() << ": " << r["why"].get<std::string>() << "\n";
  return out.str();
}

std::string plan_table(const nlohmann::ordered_json& a) {
  std::ostringstream out;
  const auto& b = a["best"];
  out << "# " << a["deployments"] << " deployments, " << a["met"]
      << " meet TTFT <= " << fixed_text(a["slo_ttft_s"].get<double>() * 1e3, 1)
      << " ms and TPOT <= " << fixed_text(a["slo_tpot_s"].get<double>() * 1e3, 1) << " ms for "
      << fixed_text(a["attainment"].get<double>() * 100, 0) << " % of requests, " << a["failed"]
      << " failed\n";
  out << "best: " << b["deployment"].get<std::string>() << ": "
      << fixed_text(b["cost_per_mtok_usd"].get<double>(), 3) << " USD per million output tokens, "
      << fixed_text(b["good_fraction"].get<double>() * 100, 1) << " % within both SLOs, goodput "
      << fixed_text(b["request_goodput"].get<double>(), 3) << " requests/s, p99 TTFT "
      << fixed_text(b["p99_ttft_s"].get<double>() * 1e3, 1) << " ms, p99 TPOT "
      << fixed_text(b["p99_tpot_s"].get<double>() * 1e3, 1) << " ms\n";
  for (const auto& r : a["runners_up"])
    out << "  " << r["deployment"].get<std::string>() << ": " << r["why"].get<std::string>() << "\n";
  return out.str();
}

}  // namespace ultrasim
