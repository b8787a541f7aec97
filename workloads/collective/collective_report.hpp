// Results of `ultrasim run` in the three formats: an nccl-tests-style table, JSON (architecture.md's
// fields), CSV. Outputs carry no wall-clock values, so equal inputs give byte-identical outputs.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/analysis/explain.hpp"
#include "sim/analysis/link_stats.hpp"
#include "sim/analysis/report.hpp"
#include "workloads/collective/collective_job.hpp"

namespace ultrasim {

struct RunReport {
  const PreparedJob& job;
  const SimResult& result;
  const Metrics& metrics;
  std::string command;                                     // the command line that produced it
  std::optional<double> fault_free_time_s = std::nullopt;  // with faults: the same run without them
  const LinkStats* links = nullptr;  // the JSON's "links" object (with the records of the run)
  const Explanation* why = nullptr;  // --explain: the JSON's "explain" object and the table's "why" lines
};

nlohmann::json run_json(const RunReport& report);
std::string run_table(const RunReport& report);
std::string run_csv(const RunReport& report);

}  // namespace ultrasim
