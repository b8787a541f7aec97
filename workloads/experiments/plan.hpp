// The capacity planner (`ultrasim plan`): for a model, requests (a trace or a rate) and a pair of SLOs,
// the deployments of a search space (topologies x tp x schedulers, the disaggregated ones at several
// prefill shares) as one workload sweep of `serve` runs with arrivals, and the answer: the cheapest per
// million output tokens among those where at least `attainment` of the requests meet both SLOs, with the
// runners-up and why each lost. The sweep runs like any (sweep.hpp: --jobs, --shard K/N, --out, resume),
// so a large search shards over a cluster: --emit-sweep writes the sweep file, `ultrasim sweep --shard`
// runs its parts, `ultrasim plan --from ROWS...` ranks the rows they wrote.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/experiments/sweep.hpp"

namespace ultrasim {

struct PlanSpec {
  nlohmann::ordered_json base;  // the serving workload each deployment runs (model, arrivals, SLOs)
  std::vector<std::string> topologies{"trn3"};
  std::vector<int> tps{1};
  std::vector<std::string> schedulers{"continuous", "chunked", "disaggregated"};
  std::vector<double> prefill_shares{0.25, 0.5};  // disaggregated: the prefill pool's share of the chips
  double attainment = 0.9;                        // of requests within both SLOs
  // Sizing a fleet by capacity: each deployment's capacity (`serve --capacity`) sets how many replicas of it
  // (a whole topology each) serve `target_rate`; the cheapest fleet per million output tokens wins.
  bool capacity = false;
  double target_rate = 0;             // requests/s the fleet serves
  std::uint64_t max_replicas = 1000;  // a fleet larger than this does not count
  // InputError naming the option: empty lists, an unknown scheduler, shares outside (0, 1), ...
  void validate() const;
};

// The deployments as a workload sweep of "serving": the base, one case per deployment.
SweepSpec plan_sweep(const PlanSpec& spec);
// The sweep file plan_sweep's spec is (`ultrasim sweep --file` reads it).
nlohmann::ordered_json plan_sweep_file(const PlanSpec& spec);

// The answer from the sweep's rows: {"attainment", "slo_ttft_s", "slo_tpot_s", "deployments", "met",
// "failed", "best": {...}, "runners_up": [{..., "why"}]}; a row per deployment: "deployment", its case,
// "good_fraction", "cost_per_mtok_usd", "request_goodput", p99 TTFT and TPOT. Throws InputError "no
// deployment meets ...; the best reached X % (DEPLOYMENT)" when none meets them.
nlohmann::ordered_json rank_plan(const std::vector<nlohmann::ordered_json>& rows, double attainment,
                                 std::size_t runners_up = 5);
std::string plan_table(const nlohmann::ordered_json& answer);

// The fleet from capacity rows (`serve --capacity` per deployment): replicas = ceil(target / capacity),
// at most max_replicas; the fleet's cost per million output tokens at the target rate is every replica's
// price over the tokens the target delivers. The answer: {"target_request_rate", "attainment", SLOs,
// "deployments", "met", "failed", "best", "runners_up": [{..., "why"}]}, a row per deployment with
// "replicas", "fleet_chips", "capacity_request_rate" (and per chip), "binding", "fleet_cost_per_mtok_usd",
// "cost_per_mtok_usd" (one replica at capacity). Throws InputError "no fleet of at most N replicas ...;
// the best reaches R requests/s (DEPLOYMENT)" when none serves the target.
nlohmann::ordered_json rank_fleet(const std::vector<nlohmann::ordered_json>& rows, double target_rate,
                                  std::uint64_t max_replicas, std::size_t runners_up = 5);
std::string fleet_table(const nlohmann::ordered_json& answer);

// What is wrong with `row` as a row the ranking reads ("" if nothing): a row whose status is "ok" carries
// every number rank_plan and rank_fleet read that it has at all (good_fraction, cost_per_mtok_usd, the p99
// latencies, the capacity's fields, ...) as a finite number >= 0, not null or a string: "'FIELD' is null,
// not a number".
std::string plan_row_problem(const nlohmann::ordered_json& row);

}  // namespace ultrasim
