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
