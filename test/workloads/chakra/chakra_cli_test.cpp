// Chakra execution traces (`ultrasim workload chakra:PREFIX`, workloads/chakra/chakra_run.cpp): traces
// written by scripts/make_chakra_trace.py run as their twins written as training steps do, to 1e-9;
// ASTRA-sim's microbenchmarks and traces with parallel branches take the closed form of their critical path;
// bad traces are one-line input errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include <zlib.h>

#include "cli_runner.hpp"
#include "workloads/chakra/chakra_trace.hpp"

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
  // A rank whose file is cut short, and one whose node has a type ultrasim does not run (STORAGE_NODE).
  auto write_ranks = [&](const std::string& name, const std::string& bytes) {
    const std::string prefix = temp_path(name);
    for (int r = 0; r < 2; ++r)
      std::ofstream(prefix + "." + std::to_string(r) + ".et", std::ios::binary) << bytes;
    return "chakra:" + prefix;
  };
  const std::string metadata("\x00", 1);  // an empty GlobalMetadata: length 0
  expect_input_error(
      {"workload", write_ranks("store", metadata + std::string("\x02\x18\x08", 3)), "--topology", "switch:2"},
      "node type STORAGE_NODE (8) is not one ultrasim runs");
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

TEST_CASE("a gzip trace is read as a stream: a small file that inflates to a flood is refused at once") {
  // 256 MiB of zeros in about 1 MB: read whole, it took 3.4 s and 300 MiB before its first node was
  // looked at; streamed, its second message (a node of no type) is refused after a few bytes.
  const std::string prefix = temp_path("zeros");
  gzFile out = gzopen((prefix + ".0.et.gz").c_str(), "wb1");
  const std::string mib(1 << 20, '\0');
  for (int i = 0; i < 256; ++i) gzwrite(out, mib.data(), static_cast<unsigned>(mib.size()));
  gzclose(out);
  expect_input_error({"workload", "chakra:" + prefix, "--topology", "switch:1"},
                     "node 0 '': node type INVALID_NODE (0) is not one ultrasim runs");
  // A trace past the cap is refused by its uncompressed size while it streams.
  CHECK_THROWS_WITH(ultrasim::read_chakra_trace(prefix, 1 << 20),
                    Catch::Contains("node type INVALID_NODE"));  // refused at the node, before the cap
  const std::string big = temp_path("big");
  out = gzopen((big + ".0.et.gz").c_str(), "wb1");
  // A GlobalMetadata of 2 MiB (length 2^21), all of it one unknown field 15 of 2^21 - 4 bytes (length
  // 0x1ffffc), which protobuf reads through to skip.
  const std::string huge_metadata("\x80\x80\x80\x01\x7a\xfc\xff\x7f", 8);
  gzwrite(out, huge_metadata.data(), static_cast<unsigned>(huge_metadata.size()));
  const std::string filler((1 << 21) - 4, 'x');
  gzwrite(out, filler.data(), static_cast<unsigned>(filler.size()));
  gzclose(out);
  CHECK_THROWS_WITH(ultrasim::read_chakra_trace(big, 1 << 20),
                    Catch::EndsWith("more than 1 MiB (uncompressed); ultrasim reads traces up to that size"));
}

namespace {

// `ultrasim run`'s time for `collective` of `size` bytes by `algorithm` on `topology`.
double run_time(const std::string& topology, const std::string& collective, const std::string& algorithm,
                std::uint64_t size) {
  return run_json({"--topology", topology, "--collective", collective, "--algorithm", algorithm, "--size",
                   std::to_string(size)})["time_s"];
}

}  // namespace

TEST_CASE(
    "ASTRA-sim's microbenchmark traces take their collective's closed form, all-gathers at p x comm_size") {
  for (int p : {4, 8, 16})
    for (const std::string collective : {"allreduce", "allgather", "reducescatter", "alltoall"}) {
      const std::string topology = "switch:" + std::to_string(p);
      // Ring, as ASTRA-sim runs them by default.
      const json r = run_trace({"chakra:" + make_trace("micro-" + collective, p, "1MiB"), "--topology",
                                topology, "--algorithm", "ring"});
      INFO(collective << " on " << p << " ranks");
      CHECK(r["verified"] == true);
      CHECK(r["engine"] == "flow");  // a rank's streams run on the flow engine
      // ASTRA-sim's comm_size of an all-gather is each rank's input: the whole output is p times it.
      const std::uint64_t bytes = collective == "allgather" ? (1u << 20) * p : 1u << 20;
      const json& c = r["collectives"][0];
      CHECK(c["bytes"] == bytes);
      const double closed = run_time(topology, collective, c["algorithm"], bytes);
      CHECK(r["critical_path_s"].get<double>() == Approx(closed).epsilon(1e-9));
      CHECK(r["step_time_s"].get<double>() == Approx(closed).epsilon(1e-9));
    }
  // --comm-size nccl-tests reads comm_size as the whole output: p times less data.
  const json nccl = run_trace({"chakra:" + make_trace("micro-allgather", 8, "1MiB"), "--topology", "switch:8",
                               "--comm-size", "nccl-tests"});
  CHECK(nccl["collectives"][0]["bytes"] == 1u << 20);
  CHECK(nccl["comm_size"] == "nccl-tests");
}

TEST_CASE("a rank's compute runs beside its communication, serial streams and comm_slowdown lengthen it") {
  // fwd 1 ms, then bwd 2 ms on the compute stream; a 64 MiB ring all-reduce that depends on neither.
  const std::string prefix = make_trace("overlap", 8, "64MiB", "--compute-us 1000,2000");
  const double ring = run_time("switch:8", "allreduce", "ring", 64u << 20);
  const std::vector<std::string> base{"chakra:" + prefix, "--topology", "switch:8", "--algorithm",
                                      "allreduce=ring"};
  const json overlap = run_trace(base);
  CHECK(overlap["step_time_s"].get<double>() == Approx(std::max(3e-3, ring)).epsilon(1e-9));
  CHECK(overlap["critical_path_s"].get<double>() == Approx(std::max(3e-3, ring)).epsilon(1e-9));
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), base.begin(), base.end());
    return run_trace(extra)["step_time_s"].get<double>();
  };
  CHECK(with({"--streams", "serial"}) == Approx(3e-3 + ring).epsilon(1e-9));
  // bwd starts at 1 ms while the all-reduce (1.19 ms) runs: it takes 1.5 x 2 ms.
  CHECK(with({"--comm-slowdown", "0.5"}) == Approx(1e-3 + 3e-3).epsilon(1e-9));
  // A workload file says the same.
  const std::string file = temp_path("overlap.json");
  std::ofstream(file) << json{
      {"workload", "chakra"},
      {"trace", prefix},
      {"topology", "switch:8"},
      {"algorithms", {{"allreduce", "ring"}}},
      {"streams", "serial"}}.dump();
  CHECK(json::parse(run_cli({"workload", file, "--format", "json"}).out)["step_time_s"].get<double>() ==
        Approx(3e-3 + ring).epsilon(1e-9));
  // Perfetto: the compute stream and the host never share a track (no two slices of a track overlap).
  const std::string trace = temp_path("overlap_trace.json");
  const std::string dag = "chakra:" + make_trace("dag", 8, "16MiB", "--compute-us 100,400");
  REQUIRE(run_cli({"workload", dag, "--topology", "switch:8", "--trace", trace}).status == 0);
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
  const json events = json::parse(std::ifstream(trace))["traceEvents"];
  for (const json& e : events)
    if (e["ph"] == "X" && e["cat"] == "compute")
      tracks[{e["pid"].get<int>(), e["tid"].get<int>()}].emplace_back(
          e["ts"], e["ts"].get<double>() + e["dur"].get<double>());
  CHECK(tracks.size() == 16);  // each chip: "compute" and "compute 2" (the host beside the kernels)
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end());
    for (std::size_t i = 1; i < slices.size(); ++i) CHECK(slices[i].first >= slices[i - 1].second - 1e-9);
  }
  // SimGrid runs one activity per chip: it takes the serial rule only.
  expect_input_error({"workload", base[0], "--topology", "switch:8", "--engine", "simgrid"},
                     "--engine simgrid runs one activity per chip");
  const json simgrid = run_trace({base[0], "--topology", "switch:8", "--algorithm", "allreduce=ring",
                                  "--engine", "simgrid", "--streams", "serial"});
  CHECK(simgrid["step_time_s"].get<double>() == Approx(3e-3 + ring).epsilon(1e-6));
}

TEST_CASE(
    "a DAG with parallel branches takes its critical path: host ops beside kernels, gradients beside "
    "backward") {
  // Host: data loader 100 us beside fwd 100 us; bwd 2 and bwd 1, 400 us each; each layer's 16 MiB all-reduce
  // after its backward (the first ends before the second starts: 400 us > the ring's 307.6 us); the
  // optimizer (host, 100 us) after both.
  const json r = run_trace({"chakra:" + make_trace("dag", 8, "16MiB", "--compute-us 100,400"), "--topology",
                            "switch:8", "--algorithm", "allreduce=ring"});
  const double ring = run_time("switch:8", "allreduce", "ring", 16u << 20);
  const double path = 100e-6 + 400e-6 + 400e-6 + ring + 100e-6;
  CHECK(r["step_time_s"].get<double>() == Approx(path).epsilon(1e-9));
  CHECK(r["critical_path_s"].get<double>() == Approx(path).epsilon(1e-9));
  for (const json& rank : r["ranks"]) {
    CHECK(rank["compute_s"].get<double>() == Approx(900e-6).epsilon(1e-12));
    CHECK(rank["host_s"].get<double>() == Approx(200e-6).epsilon(1e-12));
  }
  // As jobs sharing switch:16 (their chips apart), the overlapped and the serial step take what each takes
  // alone.
  const std::string jobs = temp_path("chakra_jobs.json");
  const std::string dag = make_trace("dag", 8, "16MiB", "--compute-us 100,400");
  std::ofstream(jobs)
      << json{{"workload", "jobs"},
              {"topology", "switch:16"},
              {"jobs",
               {{{"name", "a"},
                 {"chips", "0-7"},
                 {"workload", {{"workload", "chakra"}, {"trace", dag}, {"algorithm", "ring"}}}},
                {{"name", "b"},
                 {"chips", "8-15"},
                 {"workload",
                  {{"workload", "chakra"}, {"trace", dag}, {"algorithm", "ring"}, {"streams", "serial"}}}}}}}
             .dump();
  const json both = run_trace({jobs});
  CHECK(both["jobs"][0]["time_s"].get<double>() == Approx(path).epsilon(1e-9));
  CHECK(both["jobs"][1]["time_s"].get<double>() == Approx(1.1e-3 + 2 * ring).epsilon(1e-9));
  // One at a time, the same nodes take their sum: 1.1 ms of compute and host work plus both all-reduces.
  const json serial =
      run_trace({"chakra:" + make_trace("dag", 8, "16MiB", "--compute-us 100,400"), "--topology", "switch:8",
                 "--algorithm", "allreduce=ring", "--streams", "serial"});
  CHECK(serial["step_time_s"].get<double>() == Approx(1.1e-3 + 2 * ring).epsilon(1e-9));
  CHECK(serial["critical_path_s"].get<double>() ==
        Approx(serial["step_time_s"].get<double>()).epsilon(1e-12));
}

TEST_CASE("PyTorch's converter output runs: process-group metadata, host-side calls, memory loads") {
  // Group "1" (the even ranks) comes from the process_group:init node. Even ranks: fwd 100 us, then the
  // host's c10d call (5 us) waits for the optimizer step (300 us) on the host, then the kernel all-reduces
  // 1 MiB on the 4 even ranks; the 1 MiB load from HBM (on the communication stream) is long done.
  const std::string prefix = make_trace("pytorch", 8, "1MiB", "--compute-us 100,300");
  const json r = run_trace({"chakra:" + prefix, "--topology", "switch:8", "--algorithm", "allreduce=ring"});
  CHECK(r["verified"] == true);
  REQUIRE(r["collectives"].size() == 1);
  CHECK(r["collectives"][0]["group"] == "1");
  CHECK(r["collectives"][0]["chips"] == 4);
  const double ring = run_time("switch:8@0,2,4,6", "allreduce", "ring", 1u << 20);
  CHECK(r["step_time_s"].get<double>() == Approx(305e-6 + ring).epsilon(1e-9));
  const double hbm = r["parameters"]["hbm_bandwidth"].get<double>();
  CHECK(r["ranks"][1]["time_s"].get<double>() == Approx(300e-6).epsilon(1e-9));
  CHECK(r["ranks"][1]["memory_s"].get<double>() == Approx((1u << 20) / hbm).epsilon(1e-12));
  CHECK(r["ranks"][0]["host_s"].get<double>() == Approx(305e-6).epsilon(1e-12));
}

TEST_CASE("pg_name 0 is every rank, ASTRA-sim's communicator-group file names the others") {
  const json all = run_trace(
      {"chakra:" + make_trace("micro-allreduce", 8, "1MiB", "--pg-name 0"), "--topology", "switch:8"});
  CHECK(all["collectives"][0]["group"] == "");
  CHECK(all["collectives"][0]["chips"] == 8);
  const std::string prefix = make_trace("micro-allreduce", 8, "1MiB", "--pg-name 1");
  const std::string groups = temp_path("groups.json");
  std::ofstream(groups) << R"({"1": [0, 1, 2, 3, 4, 5, 6, 7]})";
  const json named = run_trace({"chakra:" + prefix, "--topology", "switch:8", "--comm-group", groups});
  CHECK(named["collectives"][0]["group"] == "1");
  CHECK(named["step_time_s"] == all["step_time_s"]);
  std::ofstream(groups) << R"({"1": [0, 1, 1]})";
  expect_input_error({"workload", "chakra:" + prefix, "--topology", "switch:8", "--comm-group", groups},
                     "group '1' lists a rank twice");
}

TEST_CASE(
    "traces whose streams deadlock, unknown groups and dimensions the fabric lacks are refused in one line") {
  expect_input_error({"workload", "chakra:" + make_trace("cycle", 2, "1MiB"), "--topology", "switch:2"},
                     "rank 0 node 0 'a': its dependencies (data or control) form a cycle");
  expect_input_error({"workload", "chakra:" + make_trace("deadlock", 4, "1MiB"), "--topology", "switch:4"},
                     "rank 0 node 0 'recv': waits for a message from rank 3 (comm_tag 3) that is never sent");
  expect_input_error(
      {"workload", "chakra:" + make_trace("micro-allreduce", 8, "1MiB", "--pg-name 7"), "--topology",
       "switch:8"},
      "rank 0 node 0 'all_reduce_8npus_1MB': process group '7' is not in the trace's metadata");
  const std::string dims = make_trace("micro-allreduce", 4, "1MiB", "--involved-dim true,false");
  expect_input_error(
      {"workload", "chakra:" + dims, "--topology", "switch:4"},
      "rank 0 node 0 'all_reduce_4npus_1MB': involved_dim [true,false] leaves network dimensions out");
  // Every dimension involved is the whole group, as without the attribute.
  const json every =
      run_trace({"chakra:" + make_trace("micro-allreduce", 4, "1MiB", "--involved-dim true,true"),
                 "--topology", "switch:4"});
  CHECK(every["collectives"][0]["chips"] == 4);
  expect_input_error({"workload", "chakra:" + dims, "--topology", "switch:4", "--comm-streams", "x"},
                     "--comm-streams must be an integer between 0 and 1000000, not 'x'");
  expect_input_error({"workload", "chakra:" + dims, "--topology", "switch:4", "--streams", "both"},
                     "--streams: unknown value 'both'; known: overlap, serial");
}

TEST_CASE(
    "a trace missing a rank's file, a collective without its size or a send no rank receives is refused") {
  // Rank 2's file lost from a 4-rank trace: read as 2 ranks it would run, smaller, in silence.
  const std::string missing = make_trace("dp", 4, "1MiB");
  REQUIRE(std::remove((missing + ".2.et").c_str()) == 0);
  expect_input_error({"workload", "chakra:" + missing, "--topology", "switch:2"},
                     "Chakra trace '" + missing + "': rank 2's file " + missing + ".2.et is missing, but " +
                         missing + ".3.et is there (every rank from 0 needs its file)");
  expect_input_error({"workload", "chakra:" + make_trace("unsized", 2, "1MiB"), "--topology", "switch:2"},
                     "node 1 'grad all-reduce': a collective needs the attribute comm_size (its bytes)");
  expect_input_error(
      {"workload", "chakra:" + make_trace("unmatched", 2, "1MiB"), "--topology", "switch:2"},
      "rank 0 node 1 'send': sends a message to rank 1 (comm_tag 7) that rank 1 never receives");
}
