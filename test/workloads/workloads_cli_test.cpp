// The workload registry (workloads/registry.hpp): every kind runs from a workload file, is listed, and is a
// sweep's points; a workload sweep's row holds what `ultrasim workload` prints for that point.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "cli_runner.hpp"

using namespace ultrasim::test;
using nlohmann::json;

namespace {

// A result without the fields that name the command or the build that made it.
json simulated(json result) {
  for (const char* key : {"command", "version"}) result.erase(key);
  return result;
}

const char* kMoeBase = R"({"topology": "switch:8", "experts": 16, "top_k": 2, "tokens_per_chip": 1024,
                           "hidden": 512})";

}  // namespace

TEST_CASE("list workloads names every kind, the command that runs it and its formats") {
  CliResult r = run_cli({"list", "workloads", "--format", "json"});
  REQUIRE(r.status == 0);
  const json list = json::parse(r.out)["workloads"];
  REQUIRE(list.size() == 8);
  CHECK(list[0]["name"] == "collective");
  CHECK(list[0]["command"] == "run, workload FILE");
  CHECK(list[0]["formats"] == json({"table", "json", "csv"}));
  CHECK(list[1]["name"] == "moe");
  CHECK(list[2]["name"] == "training");
  CHECK(list[2]["command"] == "workload FILE");
  CHECK(list[3]["name"] == "train");
  CHECK(list[3]["command"] == "train, workload FILE");
  CHECK(list[4]["name"] == "pingpong");
  CHECK(list[4]["command"] == "workload FILE");
  CHECK(list[5]["name"] == "chakra");
  CHECK(list[6]["name"] == "jobs");
  CHECK(list[6]["formats"] == json({"table", "json"}));
  CHECK(list[7]["name"] == "serving");
  CHECK(list[7]["command"] == "serve, workload FILE");
}

TEST_CASE("a collective workload file is `ultrasim run` with the same words, in every format") {
  const json file =
      workload_json(R"({"workload": "collective", "topology": "switch:8", "collective": "allreduce",
      "algorithm": "ring", "size": "1MiB", "set": {"link_bandwidth": "200GBps"}, "seed": 3})",
                    "collective.json");
  const json run = run_json({"--topology", "switch:8", "--collective", "allreduce", "--algorithm", "ring",
                             "--size", "1MiB", "--set", "link_bandwidth=200GBps", "--seed", "3"});
  CHECK(simulated(file) == simulated(run));
  // 14 steps of 500 ns + 500 ns + 128 KiB at 200 GB/s.
  CHECK(file["time_s"].get<double>() == Approx(14 * (1e-6 + 131072 / 200e9)).epsilon(1e-12));
  const std::string path = temp_path("collective.json");
  CliResult csv = run_cli({"workload", path, "--format", "csv"});
  CliResult run_csv =
      run_cli({"run", "--topology", "switch:8", "--collective", "allreduce", "--algorithm", "ring", "--size",
               "1MiB", "--set", "link_bandwidth=200GBps", "--seed", "3", "--format", "csv"});
  CHECK(csv.status == 0);
  CHECK(csv.out == run_csv.out);
  expect_input_error({"workload", path, "--format", "xml"}, "unknown format 'xml'");
  std::ofstream(path) << R"({"workload": "collective", "topology": "switch:8", "collective": "allreduce",
                             "algorithm": "ring", "size": -1})";
  expect_input_error({"workload", path}, "field 'size' must be a whole number or a string, not -1");
  std::ofstream(path) << R"({"workload": "collective", "topology": "switch:8", "algorithm": "ring"})";
  expect_input_error({"workload", path}, "missing field 'collective'");
  std::ofstream(path) << R"({"workload": "collective", "topology": "switch:8", "collective": "allreduce",
                             "algorithm": "ring", "size": "1MiB", "sizes": 3})";
  expect_input_error({"workload", path}, "unknown field 'sizes'");
}

TEST_CASE("a workload sweep runs an MoE grid: each row is the point's `workload` result") {
  const std::string sweep = temp_path("moe_sweep.json"), out = temp_path("moe_sweep.jsonl");
  std::ofstream(sweep) << R"({"workload": "moe", "base": )" << kMoeBase << R"(,
      "cases": [{"capacity_factor": 1.0}, {"capacity_factor": "unlimited"}],
      "grid": {"zipf": [0, 1.2]}})";
  CliResult r = run_cli({"sweep", "--file", sweep, "--out", out});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out,
             Catch::Contains("# moe: layer_time_s per point") && Catch::Contains("4 points, 0 failed"));
  const auto rows = read_json_lines(out);
  REQUIRE(rows.size() == 4);
  CHECK(rows[3]["inputs"] == json::parse(R"({"capacity_factor": "unlimited", "zipf": 1.2})"));
  json point = json::parse(kMoeBase);
  point["workload"] = "moe", point["capacity_factor"] = "unlimited", point["zipf"] = 1.2;
  const json alone = workload_json(point.dump(), "moe_point.json");
  CHECK(rows[3]["layer_time_s"] == alone["layer_time_s"]);
  CHECK(rows[3]["command"] == "ultrasim workload - --format json");  // no temporary path: deterministic
  // Skew slows the uncapped layer; a capacity of 1.0 drops copies instead.
  CHECK(rows[3]["layer_time_s"].get<double>() > rows[2]["layer_time_s"].get<double>());
  CHECK(rows[1]["dropped_tokens"].get<double>() > 0);
  CHECK(rows[3]["dropped_tokens"] == 0);
  // The same sweep as CSV: the kind's columns after what each point changed.
  CliResult csv = run_cli({"sweep", "--file", sweep, "--format", "csv"});
  REQUIRE(csv.status == 0);
  CHECK(csv.out.rfind("point,status,workload,inputs,layer_time_s,dispatch_s,", 0) == 0);
  CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 5);
  expect_input_error({"sweep", "--file", sweep, "--sizes", "1KiB"},
                     "a workload sweep takes its points from its file");
}

TEST_CASE("a workload sweep runs a training grid over layouts, a failing point keeps the others") {
  const std::string sweep = temp_path("training_sweep.json"), out = temp_path("training_sweep.jsonl");
  std::ofstream(sweep) << R"({"workload": "training",
      "base": {"topology": "switch:8", "stages": [{"name": "grads", "compute_s": "10us",
               "collectives": [{"collective": "allreduce", "algorithm": "ring", "size": "64MiB", "groups": "dp"}]}]},
      "grid": {"layout": ["tp=1,dp=8", "tp=2,dp=4", "tp=3,dp=3"]}})";
  CliResult r = run_cli({"sweep", "--file", sweep, "--out", out});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = read_json_lines(out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["status"] == "ok");
  CHECK(rows[1]["status"] == "ok");
  // A ring all-reduce of 64 MiB over dp chips on one switch: 2(dp-1) steps of 1 us + 64 MiB / dp / 100 GB/s.
  for (int k : {0, 1}) {
    const int dp = k == 0 ? 8 : 4;
    const double ring = 2 * (dp - 1) * (1e-6 + 67108864.0 / dp / 100e9);
    // dp groups of tp chips each: on one switch, tp rings at once share no link.
    CHECK(rows[k]["step_time_s"].get<double>() == Approx(ring).epsilon(1e-9));
  }
  CHECK(rows[2]["status"] == "error");
  CHECK(rows[2]["exit_status"] == 2);
  CHECK_THAT(rows[2]["error"].get<std::string>(), Catch::Contains("tp=3,dp=3"));
}
