// The planner's ranking (rank_plan, workloads/experiments/plan.hpp) as a unit: from a sweep's rows to the
// cheapest deployment that meets the SLOs, with the runners-up and why each lost.
#include <catch2/catch.hpp>

#include "topology/base/errors.hpp"
#include "workloads/experiments/plan.hpp"

using namespace ultrasim;

namespace {

nlohmann::ordered_json plan_row(int point, const char* topology, double good, double cost) {
  return {{"point", point},
          {"status", "ok"},
          {"inputs", {{"topology", topology}, {"tp", 1}, {"scheduler", "chunked"}}},
          {"good_fraction", good},
          {"cost_per_mtok_usd", cost},
          {"request_goodput", good * 2},
          {"p99_ttft_s", 0.5},
          {"p99_tpot_s", 0.04},
          {"slo_ttft_s", 1.0},
          {"slo_tpot_s", 0.05}};
}

}  // namespace

TEST_CASE("the plan is the cheapest deployment that meets the SLOs, the others say why they lost") {
  std::vector<nlohmann::ordered_json> rows{plan_row(0, "a", 0.95, 3.0), plan_row(1, "b", 0.99, 2.0),
                                           plan_row(2, "c", 0.5, 1.0), plan_row(3, "d", 0.9, 2.5)};
  rows.push_back(
      {{"point", 4}, {"status", "error"}, {"inputs", {{"topology", "e"}}}, {"error", "does not fit"}});
  const auto answer = rank_plan(rows, 0.9);
  CHECK(answer["best"]["deployment"] == "b tp 1 chunked");
  CHECK(answer["met"] == 3);
  CHECK(answer["failed"] == 1);
  const auto& lost = answer["runners_up"];
  REQUIRE(lost.size() == 4);
  CHECK(lost[0]["deployment"] == "d tp 1 chunked");  // 0.9 meets 0.9: costs 25 % more
  CHECK(lost[0]["why"] == "costs 25.0 % more (2.500 against 2.000 USD/Mtok)");
  CHECK(lost[1]["deployment"] == "a tp 1 chunked");
  CHECK(lost[2]["why"].get<std::string>().rfind(
            "misses the SLOs: 50.0 % of requests within both (needs 90 %)", 0) == 0);
  CHECK(lost[3]["why"] == "failed: does not fit");
  CHECK_THROWS_WITH(rank_plan({plan_row(0, "a", 0.5, 1.0), plan_row(1, "b", 0.7, 2.0)}, 0.9),
                    Catch::Contains("no deployment meets TTFT <= 1000.0 ms and TPOT <= 50.0 ms for 90 % of "
                                    "requests; the best reached 70.0 % (b tp 1 chunked)"));
}

TEST_CASE("rank_plan: ties keep the sweep's order, runners-up are capped, the SLOs come from the rows") {
  std::vector<nlohmann::ordered_json> rows{plan_row(0, "a", 0.95, 2.0), plan_row(1, "b", 0.99, 2.0),
                                           plan_row(2, "c", 0.97, 3.0), plan_row(3, "d", 0.96, 4.0),
                                           plan_row(4, "e", 0.2, 1.0),  plan_row(5, "f", 0.4, 1.0)};
  const auto answer = rank_plan(rows, 0.9, 2);
  CHECK(answer["best"]["deployment"] == "a tp 1 chunked");  // a and b cost the same: the first row wins
  CHECK(answer["deployments"] == 6);
  CHECK(answer["met"] == 4);
  CHECK(answer["slo_ttft_s"] == 1.0);
  CHECK(answer["slo_tpot_s"] == 0.05);
  const auto& lost = answer["runners_up"];
  REQUIRE(lost.size() == 4);  // two that met (capped at 2), then two that missed, best attainment first
  CHECK(lost[0]["deployment"] == "b tp 1 chunked");
  CHECK(lost[0]["why"] == "costs 0.0 % more (2.000 against 2.000 USD/Mtok)");
  CHECK(lost[1]["deployment"] == "c tp 1 chunked");
  CHECK(lost[2]["deployment"] == "f tp 1 chunked");
  CHECK(lost[2]["why"] ==
        "misses the SLOs: 40.0 % of requests within both (needs 90 %); p99 TTFT 500.0 ms, p99 TPOT 40.0 ms");
  CHECK(lost[3]["deployment"] == "e tp 1 chunked");
}

TEST_CASE(
    "rank_plan: a disaggregated deployment is named with its prefill share, and bad rows are failures") {
  nlohmann::ordered_json split = plan_row(0, "trn3", 0.95, 1.5);
  split["inputs"]["scheduler"] = "disaggregated";
  split["inputs"]["prefill_share"] = 0.25;
  nlohmann::ordered_json no_number = plan_row(1, "x", 0.99, 1.0);
  no_number["good_fraction"] = nullptr;  // a row without a serving result is a failure, not a winner
  const auto answer = rank_plan({split, no_number}, 0.9);
  CHECK(answer["best"]["deployment"] == "trn3 tp 1 disaggregated (prefill 25 %)");
  CHECK(answer["failed"] == 1);
  CHECK(answer["runners_up"][0]["why"] == "failed: no serving result");
  CHECK_THROWS_WITH(rank_plan({no_number}, 0.9),
                    "plan: every deployment failed; the first: failed: no serving result");
  CHECK_THROWS_AS(rank_plan({}, 0.9), InputError);
}

namespace {

// A deployment's capacity row: `chips` chips, `capacity` requests/s, 100 output tokens per request, one
// replica at capacity costing `usd_per_s` (so cost_per_mtok = usd_per_s / (capacity x 100) x 1e6).
nlohmann::ordered_json capacity_row(int point, const char* topology, int chips, double capacity,
                                    double usd_per_s) {
  return {{"point", point},
          {"status", "ok"},
          {"inputs", {{"topology", topology}, {"tp", 1}, {"scheduler", "chunked"}}},
          {"chips", chips},
          {"capacity_request_rate", capacity},
          {"capacity_request_rate_per_chip", capacity / chips},
          {"capacity_output_throughput", capacity * 100},
          {"binding", "ttft"},
          {"cost_per_mtok_usd", usd_per_s / (capacity * 100) * 1e6},
          {"slo_ttft_s", 1.0},
          {"slo_tpot_s", 0.05},
          {"attainment_target", 0.9}};
}

}  // namespace

TEST_CASE("a fleet is the replicas each deployment's capacity needs, and the cheapest fleet wins") {
  // Target 25 requests/s. a: 10/s per replica at 1 USD/s -> 3 replicas, 3 USD/s for 2,500 tokens/s.
  // b: 30/s at 2 USD/s -> 1 replica, 2 USD/s: cheaper per token although dearer at capacity.
  std::vector<nlohmann::ordered_json> rows{capacity_row(0, "a", 4, 10, 1.0),
                                           capacity_row(1, "b", 16, 30, 2.0)};
  nlohmann::ordered_json broken{{"point", 2},
                                {"status", "error"},
                                {"inputs", {{"topology", "c"}, {"tp", 1}, {"scheduler", "chunked"}}},
                                {"error", "the pool's layout does not fit: 90 GiB of weights per chip"}};
  rows.push_back(broken);
  const auto answer = rank_fleet(rows, 25, 1000);
  const auto& best = answer["best"];
  CHECK(best["deployment"] == "b tp 1 chunked");
  CHECK(best["replicas"].get<double>() == 1);
  CHECK(best["fleet_chips"].get<double>() == 16);
  CHECK(best["fleet_cost_per_mtok_usd"].get<double>() == Approx(2.0 / 2500 * 1e6).epsilon(1e-12));
  const auto& lost = answer["runners_up"];
  REQUIRE(lost.size() == 2);
  CHECK(lost[0]["replicas"].get<double>() == 3);
  CHECK(lost[0]["fleet_cost_per_mtok_usd"].get<double>() == Approx(3.0 / 2500 * 1e6).epsilon(1e-12));
  CHECK(lost[0]["why"].get<std::string>().rfind("costs 50.0 % more", 0) == 0);
  CHECK(lost[1]["why"].get<std::string>().rfind("memory: ", 0) == 0);
  CHECK(answer["failed"] == 1);
  CHECK(answer["attainment"].get<double>() == 0.9);
  // A target exactly at a capacity takes that many replicas, not one more.
  CHECK(rank_fleet(rows, 30, 1000)["best"]["replicas"].get<double>() == 1);
}

TEST_CASE("a target no fleet within the replica limit serves is refused, naming the best reached") {
  const std::vector<nlohmann::ordered_json> rows{capacity_row(0, "a", 4, 10, 1.0),
                                                 capacity_row(1, "b", 16, 30, 2.0)};
  CHECK_THROWS_WITH(rank_fleet(rows, 100, 3),
                    "plan: no fleet of at most 3 replicas serves 100 requests/s; the best reaches 90.000 "
                    "requests/s (b tp 1 chunked, 30.000 requests/s each)");
  CHECK(rank_fleet(rows, 100, 4)["best"]["replicas"].get<double>() == 4);
}
