// Determinism: the same inputs and seed give byte-identical results and traces run to run, on both engines,
// with striped multi-path and with uneven all-to-allv traffic; a sweep's rows do not depend on --jobs or on
// being split into shards. (cli_test.cpp checks one all-reduce's JSON and trace; sweep_cli_test.cpp the
// JSON Lines across --jobs.)
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "cli_runner.hpp"

using namespace ultrasim::test;

namespace {

struct Output {
  int status = -1;
  std::string out, trace;
};

// Runs `args` with --trace (the same path each time: the path is part of the recorded command).
Output run_traced(std::vector<std::string> args, const std::string& trace) {
  args.insert(args.end(), {"--trace", trace});
  CliResult r = run_cli(args);
  INFO(r.err);
  return {r.status, r.out, read_file(trace)};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("the same run twice gives byte-identical JSON, CSV and traces on both engines") {
  std::ofstream(temp_path("skewed.csv")) << "0,1MiB,0,4KiB\n64KiB,0,0,0\n0,0,0,1MiB\n5,0,3,0\n";
  const std::vector<std::vector<std::string>> runs{
      // SimGrid with contention: 8 chips all sending at once through a 3x3 torus's shared links.
      {"run", "--topology", "torus:3x3", "--collective", "alltoall", "--algorithm", "direct", "--size",
       "96KiB", "--engine", "simgrid", "--seed", "7", "--format", "json"},
      // The contention-free engine with striped multi-path and uneven chunks.
      {"run", "--topology", "torus:2x4", "--collective", "allreduce", "--algorithm", "ring", "--size",
       "1000003", "--set", "multipath=stripe", "--format", "json"},
      // auto's choice, and an uneven all-to-allv from a file, as CSV.
      {"run", "--topology", "switch:4", "--collective", "alltoallv", "--algorithm", "auto",
       "--traffic-matrix", temp_path("skewed.csv"), "--format", "csv"},
  };
  for (std::size_t i = 0; i < runs.size(); ++i) {
    INFO(nlohmann::json(runs[i]).dump());
    const std::string trace = temp_path("determinism" + std::to_string(i) + ".json");
    Output a = run_traced(runs[i], trace), b = run_traced(runs[i], trace);
    REQUIRE(a.status == 0);
    REQUIRE(b.status == 0);
    CHECK(!a.out.empty());
    CHECK(a.out == b.out);
    CHECK(a.trace.size() > 100);
    CHECK(a.trace == b.trace);
  }
}

TEST_CASE(
    "a sweep's CSV and JSON Lines are byte-identical across --jobs 1 and 2, and its shards add up to it") {
  auto sweep = [](const std::string& out, const std::string& format, std::vector<std::string> extra) {
    std::vector<std::string> args{"sweep",
                                  "--topology",
                                  "switch:4,torus:2x3",
                                  "--collective",
                                  "allreduce,alltoall",
                                  "--algorithm",
                                  "ring,direct",
                                  "--sizes",
                                  "100000",
                                  "--seeds",
                                  "0,3",
                                  "--set",
                                  "link_latency=500ns,1us",
                                  "--format",
                                  format,
                                  "--out",
                                  out};
    args.insert(args.end(), extra.begin(), extra.end());
    CliResult r = run_cli(args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return read_file(out);
  };
  const std::string csv1 = sweep(temp_path("d1.csv"), "csv", {"--jobs", "1"});
  const std::string csv2 = sweep(temp_path("d2.csv"), "csv", {"--jobs", "2"});
  // header + 2 topologies x 3 (allreduce ring; alltoall ring, direct) x 2 latencies x 2 seeds
  CHECK(lines_of(csv1).size() == 1 + 2 * 3 * 2 * 2);
  CHECK(csv1 == csv2);
  const std::string jsonl1 = sweep(temp_path("d1.jsonl"), "jsonl", {"--jobs", "1"});
  const std::string jsonl2 = sweep(temp_path("d2.jsonl"), "jsonl", {"--jobs", "2"});
  CHECK(jsonl1 == jsonl2);
  // Shards: every line of the whole sweep is, byte for byte, in the shard its point belongs to.
  std::vector<std::string> merged(lines_of(jsonl1).size());
  for (int k = 0; k < 2; ++k) {
    const std::vector<std::string> shard = lines_of(sweep(temp_path("d-shard" + std::to_string(k) + ".jsonl"),
                                                          "jsonl", {"--shard", std::to_string(k) + "/2"}));
    for (const std::string& line : shard) {
      const int point = nlohmann::json::parse(line)["point"];
      CHECK(point % 2 == k);
      REQUIRE(point < static_cast<int>(merged.size()));
      merged[point] = line;
    }
  }
  CHECK(merged == lines_of(jsonl1));
}
