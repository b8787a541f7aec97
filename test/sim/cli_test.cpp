// The ultrasim command line end to end: outputs, exit statuses and error messages.
#include <catch2/catch.hpp>
#include <fstream>

#include "cli_runner.hpp"
#include "collectives/algorithm.hpp"
#include "topology/registry.hpp"

using namespace ultrasim::test;

namespace {

std::vector<std::string> run_args(std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"run",         "--topology", "switch:4", "--collective", "allreduce",
                                "--algorithm", "ring",       "--size",   "1MiB"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("bad input is one line on stderr and exit status 2, with did-you-mean for names") {
  expect_input_error(
      {"run", "--topology", "swich:4", "--collective", "allreduce", "--algorithm", "ring", "--size", "1"},
      "did you mean 'switch'");
  expect_input_error(
      {"run", "--topology", "switch:4", "--collective", "allreduc", "--algorithm", "ring", "--size", "1"},
      "did you mean 'allreduce'");
  expect_input_error(
      {"run", "--topology", "switch:4", "--collective", "allreduce", "--algorithm", "rign", "--size", "1"},
      "did you mean 'ring'");
  expect_input_error(run_args({"--set", "link_bandwith=1GBps"}), "did you mean 'link_bandwidth'");
  auto algorithm = [](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args{"run",         "--topology", "switch:4", "--collective", "allreduce",
                                  "--algorithm", name,         "--size",   "1MiB"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  expect_input_error(algorithm("switch-reduce", {}), "set switch_reduction=true");
  expect_input_error(algorithm("hierarchical", {"--set", "groups=server"}), "has no server level");
  expect_input_error(algorithm("hierarchical", {"--set", "outer=drect"}), "did you mean 'direct'");
  expect_input_error(algorithm("hierarchical", {"--set", "groups=0"}), "groups");
  expect_input_error(run_args({"--set", "link_bandwidth=0"}), "link_bandwidth");
  expect_input_error(run_args({"--set", "link_latency=-1us"}), "link_latency");
  expect_input_error(run_args({"--set", "nonsense"}), "name=value");
  expect_input_error(run_args({"--dtype", "float33"}), "did you mean 'float32'");
  expect_input_error(run_args({"--format", "yaml"}), "unknown format");
  expect_input_error(run_args({"--trace", "/nonexistent-dir/t.json"}), "cannot write trace");
  expect_input_error(
      {"run", "--topology", "switch:4", "--collective", "allreduce", "--algorithm", "ring", "--size", "12XB"},
      "'12XB'");
  expect_input_error(
      {"run", "--topology", "switch:4", "--collective", "allreduce", "--algorithm", "ring", "--size", "-5"},
      "'-5'");
  expect_input_error(
      {"run", "--topology", "torus:4x0", "--collective", "allreduce", "--algorithm", "ring", "--size", "1"},
      "torus");
  expect_input_error(
      {"run", "--topology", "switch:0", "--collective", "allreduce", "--algorithm", "ring", "--size", "1"},
      "'0'");
  expect_input_error({"run", "--collective", "allreduce"}, "--topology");
  expect_input_error({"topology", "trn3", "--format", "png"}, "unknown format");
  expect_input_error({"list", "algoritms"}, "did you mean 'algorithms'");
  expect_input_error({"frobnicate"}, "frobnicate");
}

TEST_CASE("an unreachable chip ends the run with exit status 3 and names the chips") {
  CliResult r = run_cli({"run", "--topology", "trn3", "--set", "chip_forwarding=false", "--collective",
                         "allreduce", "--algorithm", "ring", "--size", "1MiB"});
  CHECK(r.status == 3);
  CHECK_THAT(r.err, Catch::StartsWith("ultrasim: error: ") && Catch::Contains("unreachable"));
}

TEST_CASE("run --format json carries the contract's fields") {
  auto j = run_json({"--topology", "switch:4", "--collective", "allreduce", "--algorithm", "ring", "--size",
                     "1MiB", "--dtype", "bfloat16", "--seed", "7"});
  for (const char* field :
       {"topology",     "chips",    "collective", "algorithm",  "requested_algorithm", "bytes",   "count",
        "type",         "redop",    "time_s",     "algbw_GBps", "busbw_GBps",          "model_s", "bound_s",
        "pct_of_bound", "verified", "wrong",      "parameters", "schema_version",      "version", "command",
        "seed"}) {
    INFO(field);
    CHECK(j.contains(field));
  }
  CHECK(j["chips"] == 4);
  CHECK(j["bytes"] == 1048576);
  CHECK(j["count"] == 524288);
  CHECK(j["type"] == "bfloat16");
  CHECK(j["seed"] == 7);
  CHECK(j["parameters"]["link_bandwidth"] == 1e11);
  CHECK(j["parameters"]["reduce_bandwidth"].is_null());
  CHECK(j["command"].get<std::string>().find("--dtype bfloat16") != std::string::npos);
  double time = j["time_s"];
  CHECK(j["algbw_GBps"].get<double>() == Approx(1048576 / time / 1e9));
  CHECK(j["busbw_GBps"].get<double>() == Approx(1048576 / time / 1e9 * 1.5));
}

TEST_CASE("algorithm auto reports what it picked, as requested_algorithm auto, with the runner-up") {
  auto j =
      run_json({"--topology", "trn3", "--collective", "allreduce", "--algorithm", "auto", "--size", "1MiB"});
  CHECK(j["requested_algorithm"] == "auto");
  CHECK(j["algorithm"] == j["auto_ranking"][0]["algorithm"]);
  CHECK(j["model_s"] == j["auto_ranking"][0]["model_s"]);
  CHECK(j["verified"] == true);
  CliResult table = run_cli(
      {"run", "--topology", "trn3", "--collective", "allreduce", "--algorithm", "auto", "--size", "1MiB"});
  CHECK_THAT(table.out,
             Catch::Contains("# auto picked " + j["algorithm"].get<std::string>()) &&
                 Catch::Contains("runner-up " + j["auto_ranking"][1]["algorithm"].get<std::string>()));
}

TEST_CASE("one chip is a valid, instant collective") {
  auto j = run_json(
      {"--topology", "switch:1", "--collective", "allreduce", "--algorithm", "ring", "--size", "1GiB"});
  CHECK(j["time_s"] == 0.0);
  CHECK(j["algbw_GBps"].is_null());
  CHECK(j["busbw_GBps"].is_null());
  CHECK(j["verified"] == true);
}

TEST_CASE("the exported SimGrid XML loads unchanged and gives the same times as the in-memory platform") {
  for (std::vector<std::string> setting : {std::vector<std::string>{"trn3", "allreduce", "ring"},
                                           std::vector<std::string>{"torus:3x4", "alltoall", "direct"}}) {
    std::string xml = temp_path("platform-" + std::to_string(std::hash<std::string>{}(setting[0])) + ".xml");
    CliResult exported = run_cli(
        {"topology", setting[0], "--set", "switch_latency=700ns", "--format", "simgrid-xml", "-o", xml});
    REQUIRE(exported.status == 0);
    std::vector<std::string> args{"--topology",   setting[0], "--set",       "switch_latency=700ns",
                                  "--collective", setting[1], "--algorithm", setting[2],
                                  "--size",       "3MiB",     "--engine",    "simgrid"};
    auto built = run_json(args);
    args.insert(args.end(), {"--platform", xml});
    auto loaded = run_json(args);
    INFO(setting[0]);
    CHECK(loaded["time_s"] == built["time_s"]);
    CHECK(loaded["verified"] == true);
  }
}

TEST_CASE("the same inputs give byte-identical JSON and traces") {
  std::string path = temp_path("determinism.json");  // same path: it is part of the recorded command
  CliResult a = run_cli(run_args({"--format", "json", "--trace", path}));
  std::string first_trace = read_file(path);
  CliResult b = run_cli(run_args({"--format", "json", "--trace", path}));
  REQUIRE(a.status == 0);
  CHECK(a.out == b.out);
  CHECK(first_trace == read_file(path));
  CHECK(!first_trace.empty());
}

TEST_CASE("the trace has a process per chip and one complete send event per transfer") {
  std::string path = temp_path("trace.json");
  CliResult r = run_cli(run_args({"--trace", path, "--format", "json"}));
  REQUIRE(r.status == 0);
  auto run = nlohmann::json::parse(r.out);
  auto trace = nlohmann::json::parse(read_file(path));
  int processes = 0, transfers = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") ++processes;
    if (e["ph"] == "X" && e["cat"] == "transfer") {
      ++transfers;
      for (const char* arg : {"src", "dst", "bytes", "step", "path"}) CHECK(e["args"].contains(arg));
      CHECK(e["args"]["bytes"] == 1048576 / 4);
      CHECK(e["ts"].get<double>() + e["dur"].get<double>() <=
            run["time_s"].get<double>() * 1e6 * (1 + 1e-12));
    }
  }
  CHECK(processes == 4 + 1 + 1);  // chips, the switch and the fabric (its link counters)
  CHECK(transfers == 4 * 2 * 3);
  CHECK(run["transfers"] == 24);
  CHECK(trace["otherData"]["collective"] == "allreduce");
}

// The goldens are the SimGrid engine's outputs (the contention-free engine agrees to ~1e-15 relative,
// not bit for bit: engines_test.cpp).
TEST_CASE("golden outputs of tiny scenarios") {
  struct Golden {
    std::string file;
    std::vector<std::string> args;
  };
  for (const auto& g : std::vector<Golden>{
           {"switch4_allreduce_ring_1MiB.csv", run_args({"--format", "csv"})},
           {"ring5_allgather_ring_1000003.csv",
            {"run", "--topology", "ring:5", "--collective", "allgather", "--algorithm", "ring", "--size",
             "1000003", "--format", "csv"}},
           {"switch6_alltoall_direct_6MB.csv",
            {"run", "--topology", "switch:6", "--collective", "alltoall", "--algorithm", "direct", "--size",
             "6MB", "--format", "csv"}},
           {"switch2_topology.xml", {"topology", "switch:2", "--format", "simgrid-xml"}},
       }) {
    INFO(g.file);
    auto args = g.args;
    if (args.front() == "run") args.insert(args.end(), {"--engine", "simgrid"});
    CliResult r = run_cli(args);
    CHECK(r.status == 0);
    CHECK(r.out == read_file(std::string(ULTRASIM_SOURCE_DIR) + "/test/golden/" + g.file));
  }
}

TEST_CASE("list and topology describe what exists") {
  auto list = nlohmann::json::parse(run_cli({"list", "--format", "json"}).out);
  CHECK(list["topologies"].size() == ultrasim::topology_generators().size());  // file:PATH among them
  CHECK(list["algorithms"].size() == ultrasim::algorithms().size() + 2);       // and auto, file:PATH
  auto trn3 = nlohmann::json::parse(run_cli({"topology", "trn3", "--format", "json"}).out);
  CHECK(trn3["chips"] == 144);
  CHECK(trn3["switches"] == 38);
  CHECK(trn3["links"].size() == 360);
  CliResult summary = run_cli({"topology", "trn3"});
  CHECK_THAT(summary.out,
             Catch::Contains("injection    660 GB/s") && Catch::Contains("diameter     3 links"));
  CHECK_THAT(run_cli({"topology", "ring:3", "--format", "dot"}).out, Catch::StartsWith("graph \"ring:3\""));
}
