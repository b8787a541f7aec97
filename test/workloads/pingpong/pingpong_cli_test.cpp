// The ping-pong workload (workloads/pingpong/pingpong_run.cpp), the worked example of a workload added as its
// file plus one registry row: one message there and back between two chips, timed as α + n/β each way.
#include <catch2/catch.hpp>

#include <fstream>

#include "cli_runner.hpp"

using namespace ultrasim::test;
using nlohmann::json;

namespace {

const double kBandwidth = 100e9, kLinkLatency = 500e-9;  // generators' defaults

}  // namespace

TEST_CASE("a ping-pong takes hops x link latency + n / link bandwidth each way, on both engines") {
  struct Case {
    const char* topology;
    int src, dst, hops;
  };
  for (const Case& c : {Case{"switch:4", 0, 3, 2}, Case{"torus:4x4", 0, 10, 4}, Case{"ring:8", 1, 4, 3}})
    for (const char* size : {"8", "64MiB"})
      for (const char* engine : {"simgrid", "contention-free"}) {
        INFO(c.topology << " " << size << " " << engine);
        const json r = workload_json(json{{"workload", "pingpong"},
                                          {"topology", c.topology},
                                          {"src", c.src},
                                          {"dst", c.dst},
                                          {"size", size},
                                          {"engine", engine},
                                          {"set", {{"multipath", "single"}}}}
                                         .dump(),
                                     "pingpong.json");
        const double n = std::string(size) == "8" ? 8.0 : 67108864.0;
        const double one_way = c.hops * kLinkLatency + n / kBandwidth;
        CHECK(r["verified"] == true);
        CHECK(r["hops"] == c.hops);
        CHECK(r["one_way_s"].get<double>() == Approx(one_way).epsilon(1e-12));
        CHECK(r["round_trip_s"].get<double>() == Approx(2 * one_way).epsilon(1e-12));
        CHECK(r["model_s"].get<double>() == Approx(2 * one_way).epsilon(1e-12));
        CHECK(r["bandwidth_GBps"].get<double>() == Approx(n / one_way / 1e9).epsilon(1e-12));
        CHECK(r["engine"] == engine);
      }
}

TEST_CASE("a ping-pong goes from chip 0 to the last chip unless told otherwise") {
  const json r =
      workload_json(R"({"workload": "pingpong", "topology": "switch:6", "size": "1MiB"})", "pp.json");
  CHECK(r["src"] == 0);
  CHECK(r["dst"] == 5);
  CHECK(r["chips"] == 6);
  CHECK(r["one_way_s"].get<double>() == Approx(2 * kLinkLatency + 1048576.0 / kBandwidth).epsilon(1e-12));
}

TEST_CASE("a ping-pong sweep grids over sizes like any workload's") {
  const std::string sweep = temp_path("pingpong_sweep.json"), out = temp_path("pingpong_sweep.jsonl");
  std::ofstream(sweep) << R"({"workload": "pingpong", "base": {"topology": "switch:4"},
      "grid": {"size": ["1KiB", "1MiB", "5"]}})";
  CliResult r = run_cli({"sweep", "--file", sweep, "--out", out});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = read_json_lines(out);
  REQUIRE(rows.size() == 3);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const double n = k == 0 ? 1024.0 : k == 1 ? 1048576.0 : 5.0;
    CHECK(rows[k]["status"] == "ok");
    CHECK(rows[k]["one_way_s"].get<double>() == Approx(2 * kLinkLatency + n / kBandwidth).epsilon(1e-12));
  }
}

TEST_CASE("a bad ping-pong is refused with one line and status 2") {
  const std::string path = temp_path("bad_pingpong.json");
  auto refuses = [&](const std::string& text, const std::string& fragment) {
    std::ofstream(path) << text;
    expect_input_error({"workload", path}, fragment);
  };
  refuses(R"({"workload": "pingpong", "topology": "switch:4", "src": 2, "dst": 2, "size": 8})",
          "src 2 and dst 2 must be two different chips of the 4 on switch:4");
  refuses(R"({"workload": "pingpong", "topology": "switch:4", "dst": 9, "size": 8})", "two different chips");
  refuses(R"({"workload": "pingpong", "topology": "switch:4", "src": -1, "size": 8})",
          "field 'src' must be a chip index >= 0");
  refuses(R"({"workload": "pingpong", "topology": "switch:4"})", "missing field 'size'");
  refuses(R"({"workload": "pingpong", "topology": "switch:4", "size": "lots"})", "field 'size'");
  refuses(R"({"workload": "pingpong", "topology": "switch:4", "size": 8, "hops": 2})",
          "unknown field 'hops'");
  refuses(R"({"workload": "pingpong", "topology": "switch:4", "size": 8, "set": {"link_bandwith": "1GBps"}})",
          "did you mean");
}
