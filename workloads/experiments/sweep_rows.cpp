// A sweep's rows as text: the summary (best per size, or each workload point), JSON Lines and CSV.
#include "workloads/experiments/sweep.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "collectives/algorithm.hpp"
#include "collectives/schedule.hpp"
#include "sim/machine/faults.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/progress.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "topology/registry.hpp"
#include "workloads/collective/collective_job.hpp"
#include "workloads/experiments/tune.hpp"

namespace ultrasim {
namespace {

// A workload sweep's rows: each point's headline field (the kind's first column, a time in seconds).
std::string workload_points_summary(const std::vector<nlohmann::ordered_json>& rows,
                                    const std::string& headline) {
  std::ostringstream points;
  for (const auto& row : rows) {
    if (row["status"] != "ok" || !row.contains("inputs")) continue;
    if (points.tellp() == 0)
      points << "# " << row["workload"].get<std::string>() << ": " << headline << " per point\n";
    const nlohmann::ordered_json& value = row.contains(headline) ? row[headline] : nlohmann::ordered_json();
    points << "  " << row["point"] << "  "
           << (value.is_number() ? fixed_text(value.get<double>() * 1e6, 2) + " us" : std::string("-"))
           << "  " << json_text(row["inputs"]) << "\n";
  }
  return points.str();
}

// Collective rows: per group, the best algorithm per size and its runner-up, ranked as `ultrasim tune`
// ranks them (rank_sweep_rows).
std::string best_per_size_summary(const std::vector<nlohmann::ordered_json>& rows) {
  std::vector<SweepRow> parsed;
  for (const auto& row : rows)
    if (!row.contains("inputs")) parsed.push_back(sweep_row_from_json(nlohmann::json(row), "sweep", 0));
  std::ostringstream s;
  char line[256];
  auto fixed = [](const nlohmann::json& value, double scale) {
    return value.is_null() ? std::string("-") : fixed_text(value.get<double>() * scale, 2);
  };
  for (const auto& group : rank_sweep_rows(parsed)) {
    s << "# best per size: " << group.topology << " " << group.collective
      << (group.sets.empty() ? "" : " " + json_text(group.sets)) << "\n";
    std::snprintf(line, sizeof line, "%14s  %-20s %12s %12s  %-20s %12s\n", "size", "best", "time(us)",
                  "busbw(GB/s)", "runner-up", "time(us)");
    s << line;
    for (const auto& [bytes, best, runner] : group.sizes) {
      std::snprintf(line, sizeof line, "%14llu  %-20s %12s %12s  %-20s %12s\n",
                    static_cast<unsigned long long>(bytes), best->algorithm.c_str(),
                    fixed_text(best->time_s * 1e6, 2).c_str(), fixed(best->busbw_GBps, 1).c_str(),
                    runner ? runner->algorithm.c_str() : "-",
                    runner ? fixed_text(runner->time_s * 1e6, 2).c_str() : "-");
      s << line;
    }
  }
  return s.str();
}

// Collective rows: the algorithms that refused every point of their topology and collective (exit
// status 2: they do not apply there, as `--algorithm all` asks every one), each listed once with its
// reason instead of once per size; how many points that is.
std::string not_applicable_summary(const std::vector<nlohmann::ordered_json>& rows, std::size_t& points) {
  using Key = std::pair<std::string, std::string>;  // topology and collective (with the point's sets)
  std::map<Key, std::map<std::string, std::pair<bool, std::string>>> seen;  // algorithm: (refused all, why)
  std::map<Key, std::map<std::string, std::size_t>> count;
  for (const auto& row : rows) {
    if (row.contains("inputs") || !row.contains("requested_algorithm")) continue;
    const Key key{row["topology"].get<std::string>(),
                  row["collective"].get<std::string>() +
                      (row.contains("sets") && !row["sets"].empty() ? " " + json_text(row["sets"]) : "")};
    const std::string algorithm = row["requested_algorithm"].get<std::string>();
    const bool refused = row["status"] != "ok" && row.value("exit_status", 0) == 2;
    auto [it, fresh] = seen[key].try_emplace(algorithm, refused, refused ? row.value("error", "") : "");
    if (!fresh) it->second.first = it->second.first && refused;
    ++count[key][algorithm];
  }
  std::ostringstream s;
  for (const auto& [key, algorithms] : seen) {
    std::string listed;
    for (const auto& [algorithm, verdict] : algorithms) {
      if (!verdict.first) continue;
      listed += "#   " + algorithm + ": " + verdict.second + "\n";
      points += count[key][algorithm];
    }
    if (!listed.empty())
      s << "# not run on " << key.first << " " << key.second << " (they do not apply):\n" << listed;
  }
  return s.str();
}

}  // namespace

std::string sweep_summary(const std::vector<nlohmann::ordered_json>& rows,
                          const std::vector<std::string>& columns) {
  const auto failed =
      std::count_if(rows.begin(), rows.end(), [](auto& row) { return row["status"] != "ok"; });
  std::size_t refused = 0;
  const std::string not_applicable = not_applicable_summary(rows, refused);
  return best_per_size_summary(rows) + not_applicable +
         workload_points_summary(rows, columns.empty() ? "" : columns.front()) + std::to_string(rows.size()) +
         " points, " + std::to_string(failed) + " failed" +
         (refused > 0
              ? " (" + std::to_string(refused) + " of them algorithms that do not apply, listed above)"
              : "") +
         "\n";
}

std::string sweep_json_line(const nlohmann::ordered_json& row) {
  // A file: PATH topology may hold bytes that are not UTF-8: they become U+FFFD rather than an exception.
  return json_text(row) + "\n";
}

std::string sweep_csv_header(const std::vector<std::string>& columns) {
  if (!columns.empty()) {
    std::string header = "point,status,workload,inputs";
    for (const auto& c : columns) header += "," + c;
    return header + ",error\n";
  }
  return "point,status,topology,collective,requested_algorithm,algorithm,bytes,seed,sets,time_s,algbw_GBps,"
         "busbw_GBps,model_s,bound_s,pct_of_bound,verified,wrong,error\n";
}

std::string sweep_csv_line(const nlohmann::ordered_json& row, const std::vector<std::string>& columns) {
  auto field = [&](const std::string& key) -> std::string {
    if (!row.contains(key) || row[key].is_null()) return "";
    if (row[key].is_string()) return row[key].get<std::string>();
    return json_text(row[key]);
  };
  std::string line;
  if (!columns.empty()) {
    std::vector<std::string> keys{"point", "status", "workload", "inputs"};
    keys.insert(keys.end(), columns.begin(), columns.end());
    keys.push_back("error");
    for (const std::string& key : keys) line += (line.empty() ? "" : ",") + csv_text(field(key));
    return line + "\n";
  }
  for (const char* key : {"point", "status", "topology", "collective", "requested_algorithm", "algorithm",
                          "bytes", "seed", "sets", "time_s", "algbw_GBps", "busbw_GBps", "model_s", "bound_s",
                          "pct_of_bound", "verified", "wrong", "error"})
    line += (line.empty() ? "" : ",") + csv_text(field(key));
  return line + "\n";
}

}  // namespace ultrasim
