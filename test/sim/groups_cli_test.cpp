// Collectives on groups of chips (--groups): each group verified, groups on disjoint links as fast as
// one alone, groups that share a link slowed as max-min sharing says.
#include <catch2/catch.hpp>

#include "cli_runner.hpp"

using namespace ultrasim::test;

TEST_CASE("concurrent groups on disjoint chips of a contention-free topology take one group's time") {
  // switch:16: every chip has its own link to the switch, so four rings of four never meet.
  auto four = run_json({"--topology", "switch:16", "--collective", "allreduce", "--algorithm", "ring",
                        "--size", "1MiB", "--groups", "blocks:4"});
  auto one = run_json({"--topology", "switch:16", "--collective", "allreduce", "--algorithm", "ring",
                       "--size", "1MiB", "--groups", "chips:0-3"});
  auto alone = run_json(
      {"--topology", "switch:4", "--collective", "allreduce", "--algorithm", "ring", "--size", "1MiB"});
  CHECK(four["verified"] == true);
  CHECK(four["groups"] == 4);
  CHECK(four["group_size"] == 4);
  CHECK(four["time_s"].get<double>() == Approx(alone["time_s"].get<double>()).epsilon(1e-12));
  CHECK(one["time_s"].get<double>() == Approx(alone["time_s"].get<double>()).epsilon(1e-12));
  CHECK(four["model_s"].get<double>() == Approx(alone["model_s"].get<double>()).epsilon(1e-12));
  CHECK(four["busbw_GBps"].get<double>() == Approx(alone["busbw_GBps"].get<double>()).epsilon(1e-12));
  CHECK(four["transfers"].get<int>() == 4 * alone["transfers"].get<int>());
  // trn3: 36 tensor-parallel groups of 4 (one per server) run like one server alone.
  auto tp = run_json({"--topology", "trn3", "--collective", "allreduce", "--algorithm", "ring", "--size",
                      "4MiB", "--groups", "tp", "--layout", "tp=4,dp=36"});
  auto server = run_json({"--topology", "trn3", "--collective", "allreduce", "--algorithm", "ring", "--size",
                          "4MiB", "--groups", "chips:0-3"});
  CHECK(tp["groups"] == 36);
  CHECK(tp["verified"] == true);
  CHECK(tp["time_s"].get<double>() == Approx(server["time_s"].get<double>()).epsilon(1e-12));
}

TEST_CASE("groups that share a link slow down as max-min sharing predicts") {
  // ring:8: chips 0 and 2 talk through chip 1, and so do 1 and 3 through chip 2; 0->2 and 1->3 share the
  // link direction chip1->chip2, 2->0 and 3->1 share chip2->chip1. Each flow gets half of 100 GB/s.
  // A 2-chip ring all-reduce of n: two steps of n/2 over two hops (2 x 0.5 us).
  const double n = 1048576, alpha = 2 * 0.5e-6, bandwidth = 100e9;
  auto together = run_json({"--topology", "ring:8", "--collective", "allreduce", "--algorithm", "ring",
                            "--size", "1MiB", "--groups", "chips:0,2/1,3"});
  auto alone = run_json({"--topology", "ring:8", "--collective", "allreduce", "--algorithm", "ring", "--size",
                         "1MiB", "--groups", "chips:0,2"});
  CHECK(together["verified"] == true);
  CHECK(alone["time_s"].get<double>() == Approx(2 * (alpha + n / 2 / bandwidth)).epsilon(1e-12));
  CHECK(together["time_s"].get<double>() == Approx(2 * (alpha + n / 2 / (bandwidth / 2))).epsilon(1e-12));
  CHECK(together["model_s"] == alone["model_s"]);  // the model is one group alone
  CHECK(together["engine"] == "flow");             // flows meet: the contention-free proof fails
}

TEST_CASE("group runs that cannot work are bad input") {
  const std::vector<std::string> base{"run",       "--topology", "switch:8", "--collective",
                                      "allreduce", "--size",     "1MiB"};
  auto with = [&](std::vector<std::string> more) {
    auto args = base;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  expect_input_error(with({"--algorithm", "ring", "--groups", "chips:0-2/3-4"}),
                     "every group must have the same size");
  expect_input_error(with({"--algorithm", "ring", "--layout", "tp=2"}), "--layout needs --groups");
  expect_input_error(with({"--algorithm", "ring", "--groups", "blocks:4", "--layout", "tp=2"}),
                     "--layout applies to --groups tp|ep|dp|pp, not blocks:4");
  expect_input_error(
      with({"--algorithm", "switch-reduce", "--groups", "blocks:4", "--set", "switch_reduction=true"}),
      "does not run on --groups");
  expect_input_error(
      {"run", "--topology", "switch:8", "--collective", "alltoallv", "--algorithm", "direct",
       "--traffic-matrix", std::string(ULTRASIM_SOURCE_DIR) + "/workloads/examples/moe_hot_experts_8.csv",
       "--groups", "blocks:4"},
      "but its groups have 4 chips");
}
