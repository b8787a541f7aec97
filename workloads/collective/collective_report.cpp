#include "workloads/collective/collective_report.hpp"

#include <cstdio>
#include <sstream>

#include "sim/engines/engines.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {
namespace {

bool reduces(CollectiveKind kind) {
  return kind == CollectiveKind::kAllreduce || kind == CollectiveKind::kReducescatter ||
         kind == CollectiveKind::kReduce;
}

std::string csv_number(const nlohmann::json& value) {
  return value.is_null() ? "" : value.dump();
}

// (field, json value) in the order table and CSV print them.
const char* kCsvFields[] = {"topology", "chips",        "collective", "algorithm",  "bytes",      "count",
                            "type",     "redop",        "time_s",     "algbw_GBps", "busbw_GBps", "model_s",
                            "bound_s",  "pct_of_bound", "verified",   "wrong",      "transfers",  "seed"};

}  // namespace

nlohmann::json run_json(const RunReport& r) {
  const Metrics& m = r.metrics;
  auto optional = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  nlohmann::json out{
      {"schema_version", kSchemaVersion},
      {"version", ultrasim_version()},
      {"command", r.command},
      {"topology", r.job.job.topology},
      {"chips", r.job.p()},
      {"collective", r.job.collective->name},
      {"algorithm", r.job.entry->name},
      {"requested_algorithm", r.job.job.algorithm},
      {"bytes", r.job.job.bytes},
      {"count", m.count},
      {"type", r.job.job.dtype},
      {"redop", reduces(r.job.collective->kind) ? "sum" : "none"},
      {"time_s", m.time_s},
      {"algbw_GBps", optional(m.algbw_GBps)},
      {"busbw_GBps", optional(m.busbw_GBps)},
      {"model_s", m.model_s},
      {"bound_s", m.bound_s},
      {"pct_of_bound", m.time_s > 0 ? nlohmann::json(100.0 * m.bound_s / m.time_s) : nlohmann::json()},
      {"verified", r.result.verdict.wrong == 0},
      {"wrong", r.result.verdict.wrong},
      {"transfers", r.result.transfers},
      {"bytes_sent", r.result.bytes_sent},
      {"seed", r.job.job.seed},
      {"engine", engine_name(r.result.engine)},
      {"parameters", r.job.parameters()},
      {"stack", stack_json(r.job, r.job.entry->name)},
  };
  if (!r.job.groups.members.empty()) {  // communicators: the collective ran on each group at once
    out["groups"] = r.job.groups.members.size();
    out["group_size"] = r.job.group_size();
    out["group_spec"] = r.job.job.groups;
    if (!r.job.job.layout.empty()) out["layout"] = r.job.job.layout;
  }
  if (r.job.traffic) {  // alltoallv: where its size came from
    const TrafficMatrix& traffic = *r.job.traffic;
    out["traffic_matrix"] =
        r.job.job.traffic_matrix.empty() ? nlohmann::json() : nlohmann::json(r.job.job.traffic_matrix);
    out["traffic_total_bytes"] = traffic.total();
    out["busiest_chip"] = traffic.busiest_chip();
  }
  if (!r.job.faults.empty()) {  // what was injected, and what it cost
    nlohmann::json faults = nlohmann::json::array();
    for (const Fault& fault : r.job.faults.faults) faults.push_back(fault.text);
    out["faults"] = faults;
    out["fault_free_time_s"] = optional(r.fault_free_time_s);
    out["slowdown"] = r.fault_free_time_s && *r.fault_free_time_s > 0
                          ? nlohmann::json(m.time_s / *r.fault_free_time_s)
                          : nlohmann::json();
    out["restarted_flows"] = r.result.restarted_flows;
    out["resent_bytes"] = r.result.resent_bytes;
  }
  if (r.links) out["links"] = link_stats_json(*r.job.topology, *r.links);
  if (r.why) out["explain"] = explain_json(*r.job.topology, *r.why);
  if (!r.result.verdict.first_error.empty()) out["first_error"] = r.result.verdict.first_error;
  if (!r.job.auto_ranking.empty()) {
    nlohmann::json ranking = nlohmann::json::array();
    for (const AutoCandidate& c : r.job.auto_ranking) {
      nlohmann::json entry{{"algorithm", c.algorithm}};
      if (!c.protocol.empty()) entry["protocol"] = c.protocol;
      entry["model_s"] = c.model_s;
      ranking.push_back(entry);
    }
    out["auto_ranking"] = ranking;
  }
  return out;
}

std::string run_table(const RunReport& r) {
  const nlohmann::json j = run_json(r);
  auto us = [](const nlohmann::json& v) {
    return v.is_null() ? std::string("-") : fixed_text(v.get<double>() * 1e6, 2);
  };
  auto gbps = [](const nlohmann::json& v) {
    return v.is_null() ? std::string("-") : fixed_text(v.get<double>(), 2);
  };
  char line[512];
  std::ostringstream out;
  out << "# ultrasim " << j["collective"].get<std::string>() << " / " << j["algorithm"].get<std::string>()
      << " on " << j["topology"].get<std::string>() << " (" << j["chips"] << " chips)\n";
  std::snprintf(line, sizeof line, "#%14s %12s %9s %6s %12s %11s %11s %7s %12s %12s %7s\n", "size", "count",
                "type", "redop", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong", "model(us)", "bound(us)",
                "%bound");
  out << line;
  std::snprintf(line, sizeof line, "%15s %12s %9s %6s %12s %11s %11s %7s %12s %12s %7s\n",
                std::to_string(j["bytes"].get<std::uint64_t>()).c_str(),
                std::to_string(j["count"].get<std::uint64_t>()).c_str(), j["type"].get<std::string>().c_str(),
                j["redop"].get<std::string>().c_str(), us(j["time_s"]).c_str(), gbps(j["algbw_GBps"]).c_str(),
                gbps(j["busbw_GBps"]).c_str(), std::to_string(j["wrong"].get<std::uint64_t>()).c_str(),
                us(j["model_s"]).c_str(), us(j["bound_s"]).c_str(),
                j["pct_of_bound"].is_null() ? "-" : fixed_text(j["pct_of_bound"].get<double>(), 1).c_str());
  out << line;
  if (j.contains("first_error"))
    out << "# verification FAILED: " << j["first_error"].get<std::string>() << "\n";
  if (j.contains("faults")) {
    out << "# faults:";
    for (const auto& fault : j["faults"]) out << " " << fault.get<std::string>();
    out << "\n# fault-free " << us(j["fault_free_time_s"]) << " us, slowdown "
        << (j["slowdown"].is_null() ? std::string("-") : fixed_text(j["slowdown"].get<double>(), 4) + "x");
    if (j["restarted_flows"].get<std::uint64_t>() > 0)
      out << ", " << j["restarted_flows"] << " flow(s) restarted on detours (" << j["resent_bytes"]
          << " bytes resent)";
    out << "\n";
  }
  if (j.contains("auto_ranking")) {
    const auto& ranking = j["auto_ranking"];
    auto pick = [](const nlohmann::json& c) {
      return c["algorithm"].get<std::string>() +
             (c.contains("protocol") ? "/" + c["protocol"].get<std::string>() : std::string()) + " (model " +
             fixed_text(c["model_s"].get<double>() * 1e6, 2) + " us)";
    };
    out << "# auto picked " << pick(ranking[0]);
    if (ranking.size() > 1) out << "; runner-up " << pick(ranking[1]);
    out << "\n";
  }
  if (j["stack"]["name"] != "ideal") {
    const auto& s = j["stack"];
    out << "# stack " << s["name"].get<std::string>() << ", protocol " << s["protocol"].get<std::string>()
        << ": launch " << fixed_text(s["launch_latency_s"].get<double>() * 1e6, 2) << " us, "
        << fixed_text(s["step_latency_s"].get<double>() * 1e6, 2) << " us per transfer, efficiency "
        << fixed_text(s["efficiency"].get<double>(), 2) << " (--stack ideal: the fabric alone)\n";
  }
  if (r.why && r.links) out << explain_text(*r.job.topology, *r.why, *r.links);
  return out.str();
}

std::string run_csv(const RunReport& r) {
  const nlohmann::json j = run_json(r);
  std::ostringstream out;
  bool first = true;
  for (const char* field : kCsvFields) out << (first ? "" : ",") << field, first = false;
  out << "\n";
  first = true;
  for (const char* field : kCsvFields) {
    const auto& v = j[field];
    out << (first ? "" : ",") << (v.is_string() ? csv_text(v.get<std::string>()) : csv_number(v));
    first = false;
  }
  out << "\n";
  return out.str();
}

}  // namespace ultrasim
