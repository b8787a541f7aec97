// Chakra execution traces (`ultrasim workload chakra:PREFIX`, sim/runs/chakra_run.cpp): traces written by
// scripts/make_chakra_trace.py run as their twins written as training steps do, to 1e-9; bad traces are
// one-line input errors.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "cli_runner.hpp"

using namespace ultrasim::test;
using nlohmann::json;

namespace {

// Writes the trace `shape` (make_chakra_trace.py's) for `ranks` ranks; returns its prefix.
std::string make_trace(const std::string& shape, int ranks, const std::string& size,
                       const std::string& extra = "") {
  const std::string prefix = temp_path(shape + std::to_string(ranks) + size + (extra.empty() ? "" : "gz"));
  const std::string command = "/usr/bin/python3 " ULTRASIM_SOURCE_DIR "/scripts/make_chakra_trace.py " +
                              shape + " " + prefix + " --ranks " + std::to_string(ranks) + " --size " + size +
                              " " + extra;
  REQUIRE(std::system(command.c_str()) == 0);
  return prefix;
}

json run_trace(const std::vector<std::string>& args) {
  std::vector<std::string> all{"workload"};
  all.insert(all.end(), args.begin(), args.end());
  all.insert(all.end(), {"--format", "json"});
  const CliResult r = run_cli(all);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

// The training twin of a trace: compute stages, then one stage of communication, on every chip.
json twin(const std::string& topology, int p, double compute_s, const json& communication) {
  json stage{{"name", "communication"}};
  if (communication.contains("p2p"))
    stage["p2p"] = communication["p2p"];
  else
    stage["collectives"] = json::array({communication});
  return {{"workload", "training"},
          {"topology", topology},
          {"stages", {{{"name", "compute"}, {"compute_s", compute_s}}, stage}}};
}

}  // namespace

TEST_CASE(
    "a data-parallel step, a pipeline of sends and an all-to-all from Chakra traces match their training "
    "twins") {
  struct Case {
    const char* topology;
    int p;
  };
  for (const Case& c : {Case{"switch:8", 8}, Case{"trn3", 144}}) {
    INFO(c.topology);
    const std::string blocks = "blocks:" + std::to_string(c.p);
    // dp: 100 us forward + 200 us backward, then a ring all-reduce of 64 MiB.
    const json dp = run_trace({"chakra:" + make_trace("dp", c.p, "64MiB"), "--topology", c.topology,
                               "--algorithm", "allreduce=ring"});
    const json dp_twin = workload_json(
        twin(c.topology, c.p, 300e-6,
             {{"collective", "allreduce"}, {"algorithm", "ring"}, {"size", "64MiB"}, {"groups", blocks}})
            .dump(),
        "dp_twin.json");
    CHECK(dp["verified"] == true);
    CHECK(dp["step_time_s"].get<double>() == Approx(dp_twin["step_time_s"].get<double>()).epsilon(1e-9));
    CHECK(dp["compute_s"].get<double>() == Approx(300e-6).epsilon(1e-12));
    CHECK(dp["exposed_comm_s"].get<double>() ==
          Approx(dp_twin["exposed_comm_s"].get<double>()).epsilon(1e-9));
    CHECK(dp["collectives"][0]["algorithm"] == "ring");
    CHECK(dp["nodes"] == 3 * c.p);
    // pipeline: 100 us of compute, then each rank sends 1 MiB to the next along a chain.
    const json pipe = run_trace({"chakra:" + make_trace("pipeline", c.p, "1MiB"), "--topology", c.topology});
    const json pipe_twin =
        workload_json(twin(c.topology, c.p, 100e-6, {{"p2p", {{"groups", blocks}, {"size", "1MiB"}}}}).dump(),
                      "pipe_twin.json");
    CHECK(pipe["verified"] == true);
    CHECK(pipe["step_time_s"].get<double>() == Approx(pipe_twin["step_time_s"].get<double>()).epsilon(1e-9));
    // alltoall: 100 us of compute, then a direct all-to-all of 16 MiB.
    const json a2a = run_trace({"chakra:" + make_trace("alltoall", c.p, "16MiB"), "--topology", c.topology,
                                "--algorithm", "alltoall=direct"});
    const json a2a_twin = workload_json(
        twin(c.topology, c.p, 100e-6,
             {{"collective", "alltoall"}, {"algorithm", "direct"}, {"size", "16MiB"}, {"groups", blocks}})
            .dump(),
        "a2a_twin.json");
    CHECK(a2a["verified"] == true);
    CHECK(a2a["step_time_s"].get<double>() == Approx(a2a_twin["step_time_s"].get<double>()).epsilon(1e-9));
  }
}

TEST_CASE("a ring of sends takes one hop's time after the compute, gzip traces read alike") {
  // switch:8: each rank sends 1 MiB to the next around the ring at once: 2 links' latency + n / B.
  const double hop = 2 * 500e-9 + 1048576 / 100e9;
  const json ring = run_trace({"chakra:" + make_trace("ring", 8, "1MiB"), "--topology", "switch:8"});
  CHECK(ring["verified"] == true);
  CHECK(ring["step_time_s"].get<double>() == Approx(100e-6 + hop).epsilon(1e-12));
  for (const json& rank : ring["ranks"])
    CHECK(rank["exposed_comm_s"].get<double>() == Approx(hop).epsilon(1e-9));
  const json gz = run_trace({"chakra:" + make_trace("ring", 8, "1MiB", "--gzip"), "--topology", "switch:8"});
  CHECK(gz["step_time_s"] == ring["step_time_s"]);
}

TEST_CASE(
    "process groups come from the trace's metadata or the command line, and collectives verify on them") {
  const std::string prefix = make_trace("groups", 8, "1MiB");
  const json r = run_trace({"chakra:" + prefix, "--topology", "switch:8", "--algorithm", "allreduce=ring"});
  CHECK(r["verified"] == true);
  REQUIRE(r["collectives"].size() == 3);
  // The even and the odd ranks each all-reduce 1 MiB by ring at once (on a switch the two groups share
  // no link), then every rank runs the barrier, an all-reduce of one 4-byte element: the step is the
  // compute plus the two collectives as `run` times them alone (4 bytes in 8 ring chunks are uneven: some
  // chips end a few bytes' time earlier).
  const double group = run_json({"--topology", "switch:8@0,2,4,6", "--collective", "allreduce", "--algorithm",
                                 "ring", "--size", "1MiB"})["time_s"];
  const double barrier = run_json({"--topology", "switch:8", "--collective", "allreduce", "--algorithm",
                                   "ring", "--size", "4"})["time_s"];
  CHECK(r["step_time_s"].get<double>() == Approx(100e-6 + group + barrier).epsilon(1e-9));
  for (const json& rank : r["ranks"])
    CHECK(rank["time_s"].get<double>() == Approx(100e-6 + group + barrier).margin(1e-9));
  // Regrouping on the command line: the same ranks under the same names run the same step.
  const json named = run_trace({"chakra:" + prefix, "--topology", "switch:8", "--algorithm", "allreduce=ring",
                                "--process-group", "even=0,2,4,6", "--process-group", "odd=1,3,5,7"});
  CHECK(named["step_time_s"] == r["step_time_s"]);
  // A process group the trace names but neither it nor the command line defines is an input error.
  expect_input_error(
      {"workload", "chakra:" + prefix, "--topology", "switch:8", "--process-group", "even=0,2,4"},
      "rank 6 is not in its process group 'even'");
}

TEST_CASE("bad Chakra traces and options are one-line input errors") {
  const std::string dp = make_trace("dp", 8, "1MiB");
  expect_input_error({"workload", "chakra:" + dp, "--topology", "switch:16"},
                     "has 8 ranks and topology switch:16 16 chips; run it on as many (e.g. switch:16@0-7)");
  expect_input_error({"workload", "chakra:" + temp_path("none"), "--topology", "switch:8"}, "no file");
  expect_input_error({"workload", "chakra:" + dp}, "needs --topology");
  expect_input_error({"workload", "chakra:" + dp, "--topology", "switch:8", "--algorithm", "allreduce=rign"},
                     "did you mean 'ring'");
  expect_input_error({"workload", temp_path("x.json"), "--topology", "switch:8"}, "go with chakra:PREFIX");
  // A rank whose file is cut short, and one whose node has a type ultrasim does not run (MEM_LOAD_NODE).
  auto write_ranks = [&](const std::string& name, const std::string& bytes) {
    const std::string prefix = temp_path(name);
    for (int r = 0; r < 2; ++r)
      std::ofstream(prefix + "." + std::to_string(r) + ".et", std::ios::binary) << bytes;
    return "chakra:" + prefix;
  };
  const std::string metadata("\x00", 1);  // an empty GlobalMetadata: length 0
  expect_input_error(
      {"workload", write_ranks("load", metadata + std::string("\x02\x18\x02", 3)), "--topology", "switch:2"},
      "node type MEM_LOAD_NODE (2) is not one ultrasim runs");
  expect_input_error(
      {"workload", write_ranks("cut", metadata + std::string("\x09\x18\x04", 3)), "--topology", "switch:2"},
      "a message of 9 bytes runs past the end of the file");
  expect_input_error({"workload", write_ranks("empty", ""), "--topology", "switch:2"}, "empty");
  // A collective without comm_type (field 10: an attribute named "comm_size" only) and a dangling dependency.
  const std::string coll = std::string("\x18\x07", 2) + std::string("\x52\x0d\x0a\x09", 4) + "comm_size" +
                           std::string("\x48\x08", 2);
  expect_input_error(
      {"workload", write_ranks("coll", metadata + char(coll.size()) + coll), "--topology", "switch:2"},
      "a COMM_COLL_NODE needs the attribute comm_type");
  const std::string dangling = std::string("\x18\x04\x2a\x01\x05", 5);  // COMP_NODE, data_deps [5] (packed)
  expect_input_error({"workload", write_ranks("dangling", metadata + char(dangling.size()) + dangling),
                      "--topology", "switch:2"},
                     "depends on node 5, which this rank's trace does not have");
}
