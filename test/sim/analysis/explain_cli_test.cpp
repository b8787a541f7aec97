// Inside the fabric, through the command line: every run's "links" statistics (bytes x hops conserved,
// utilisation integrals equal to the bytes carried, peaks within capacity), and `--explain`: a slow link
// named as the bottleneck, a critical path as long as the run, and each chip's waiting, against closed
// forms.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "cli_runner.hpp"
#include "topology/registry.hpp"
#include "topology/routing.hpp"

using namespace ultrasim::test;
using ultrasim::PathShare;
using ultrasim::Routes;
using ultrasim::Topology;

namespace {

// The integral over the run of a utilisation given as the mean of each of its equal bins.
double integral(const nlohmann::json& bins, double bin_s) {
  double sum = 0;
  for (const auto& v : bins) sum += v.get<double>() * bin_s;
  return sum;
}

// What every run's link statistics must satisfy.
void check_links(const nlohmann::json& j) {
  const auto& links = j["links"];
  const double time = j["time_s"], bin_s = links["bin_s"];
  CHECK(links["bins"] == 100);
  CHECK(bin_s == Approx(time / 100).epsilon(1e-15));
  CHECK(links["max_flow_error"].get<double>() < 1e-9);
  std::uint64_t tier_bytes = 0;
  for (const auto& tier : links["tiers"]) {
    CHECK(tier["peak_util"].get<double>() <= 1 + 1e-12);
    CHECK(tier["busiest_peak_util"].get<double>() <= 1 + 1e-12);
    // The utilisation integral times the capacity is the bytes carried.
    CHECK(integral(tier["util_bins"], bin_s) * tier["capacity_GBps"].get<double>() * 1e9 ==
          Approx(tier["bytes"].get<double>()).epsilon(1e-9));
    tier_bytes += tier["bytes"].get<std::uint64_t>();
  }
  CHECK(tier_bytes == links["link_bytes"].get<std::uint64_t>());
  for (const auto& hot : links["hot"]) {
    CHECK(hot["peak_util"].get<double>() <= 1 + 1e-12);
    CHECK(hot["busy_s"].get<double>() <= time * (1 + 1e-12));
    CHECK(integral(hot["util_bins"], bin_s) * hot["capacity_GBps"].get<double>() * 1e9 ==
          Approx(hot["bytes"].get<double>()).epsilon(1e-9));
  }
}

// The critical path runs from 0 to the run's time without a gap, and its durations sum to the time.
void check_critical_path(const nlohmann::json& j) {
  const auto& why = j["explain"];
  const double time = j["time_s"];
  const auto& path = why["critical_path"];
  REQUIRE(!path.empty());
  CHECK(path.front()["start_s"].get<double>() == Approx(0).margin(1e-15));
  CHECK(path.back()["end_s"].get<double>() == Approx(time).epsilon(1e-12));
  for (std::size_t i = 1; i < path.size(); ++i)
    CHECK(path[i]["start_s"].get<double>() == Approx(path[i - 1]["end_s"].get<double>()).epsilon(1e-12));
  CHECK(why["critical_path_s"].get<double>() == Approx(time).epsilon(1e-12));
  CHECK(why["critical_wire_s"].get<double>() + why["critical_latency_s"].get<double>() +
            why["critical_compute_s"].get<double>() + why["critical_unattributed_s"].get<double>() ==
        Approx(time).epsilon(1e-12));
}

// ring:8 with the link chip3-chip4 at a quarter of the others' bandwidth, as a topology file.
std::string slow_link_ring() {
  const std::string path = temp_path("ring8_slow.json");
  CliResult exported = run_cli({"topology", "ring:8", "--format", "json"});
  REQUIRE(exported.status == 0);
  nlohmann::json topology = nlohmann::json::parse(exported.out);
  for (auto& link : topology["links"])
    if (link["name"] == "chip3-chip4") {
      link["raw_bandwidth_GBps"] = 25.0;
      link.erase("raw_bandwidth_Bps"), link.erase("bandwidth_GBps");
    }
  std::ofstream(path) << topology.dump();
  return "file:" + path;
}

}  // namespace

TEST_CASE("link bytes summed over links equal each transfer's bytes times its hops") {
  SECTION("trn3 direct all-to-all: every pair's flows over their (striped) paths") {
    const std::uint64_t chunk = 8192;  // per pair: the size is 144 chunks
    nlohmann::json j = run_json({"--topology", "trn3", "--collective", "alltoall", "--algorithm", "direct",
                                 "--size", std::to_string(144 * chunk)});
    const Topology t = ultrasim::make_topology("trn3", {}, {});
    const Routes routes(t);
    std::uint64_t expected = 0;
    for (int a = 0; a < 144; ++a)
      for (int b = 0; b < 144; ++b)
        if (a != b)
          routes.for_each_flow(a, b, chunk, [&](const PathShare& share, std::uint64_t part) {
            expected += part * share.path.hops.size();
          });
    CHECK(j["links"]["link_bytes"].get<std::uint64_t>() == expected);
    check_links(j);
  }
  SECTION("ring:8 ring all-reduce: one hop per transfer, so the bytes sent") {
    nlohmann::json j = run_json(
        {"--topology", "ring:8", "--collective", "allreduce", "--algorithm", "ring", "--size", "16MiB"});
    CHECK(j["links"]["link_bytes"] == j["bytes_sent"]);
    check_links(j);
    // Each of the 8 ring links (one direction each) carries 2 (p - 1) chunks of 16 MiB / 8, at full
    // rate: mean utilisation = those bytes / (B x time).
    const auto& hot = j["links"]["hot"][0];
    CHECK(hot["bytes"].get<double>() == 2 * 7 * 2097152.0);
    CHECK(hot["peak_util"].get<double>() == Approx(1.0).epsilon(1e-12));
    CHECK(hot["mean_util"].get<double>() ==
          Approx(2 * 7 * 2097152.0 / (100e9 * j["time_s"].get<double>())).epsilon(1e-12));
  }
}

TEST_CASE("every link direction's statistics go to a CSV file, each peak within its capacity") {
  const std::string path = temp_path("links.csv");
  nlohmann::json j = run_json({"--topology", "trn3", "--collective", "allreduce", "--algorithm", "ring",
                               "--size", "1MiB", "--link-stats", path});
  std::istringstream in(read_file(path));
  std::string line;
  std::getline(in, line);
  CHECK(line == "link,direction,tier,capacity_GBps,bytes,flows,busy_s,mean_util,peak_util,bottleneck_s");
  int rows = 0;
  std::uint64_t bytes = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    REQUIRE(cells.size() == 10);
    bytes += std::stoull(cells[4]);
    CHECK(std::stod(cells[6]) <= j["time_s"].get<double>() * (1 + 1e-12));
    CHECK(std::stod(cells[8]) <= 1 + 1e-12);
    ++rows;
  }
  const Topology t = ultrasim::make_topology("trn3", {}, {});
  CHECK(rows == 2 * static_cast<int>(t.links().size()));
  CHECK(bytes == j["links"]["link_bytes"].get<std::uint64_t>());
  check_links(j);
}

TEST_CASE("a deliberately slow link is named as what bounds the ring, its steps and its critical path") {
  const std::string topology = slow_link_ring();
  nlohmann::json j = run_json({"--topology", topology, "--collective", "allreduce", "--algorithm", "ring",
                               "--size", "8MiB", "--explain"});
  check_links(j);
  check_critical_path(j);
  const auto& why = j["explain"];
  CHECK(j["links"]["hot"][0]["direction"] == "chip3->chip4");
  CHECK(j["links"]["hot"][0]["peak_util"].get<double>() == Approx(1.0).epsilon(1e-12));
  CHECK(why["critical_bound_by"][0]["direction"] == "chip3->chip4");
  for (const auto& step : why["steps"]) CHECK(step["bound_by"] == "chip3->chip4");
  // chip3 sends its 14 chunks of 1 MiB one after the other at 25 GB/s (each step waits for its own send,
  // and its neighbour's chunk arrives sooner); the last reaches chip4 one link latency later.
  CHECK(j["time_s"].get<double>() == Approx(14 * 1048576 / 25e9 + 500e-9).epsilon(1e-12));
  CliResult table = run_cli({"run", "--topology", topology, "--collective", "allreduce", "--algorithm",
                             "ring", "--size", "8MiB", "--explain"});
  CHECK(table.status == 0);
  CHECK(table.out.find("#   bounded by: chip3->chip4") != std::string::npos);
  CHECK(table.out.find("#   hottest links (mean/peak): chip3->chip4 ") != std::string::npos);
}

TEST_CASE("the critical path of a late chip: its late start, then the chain of messages it delayed") {
  // switch:2 ring all-reduce of 2 MiB: chunks of 1 MiB, t = 1 MiB / B, alpha = two links' latency.
  // chip1 starts 10 us late. chip0 sends step 0 at once, waits for chip1's step 0 (delivered at
  // 10 + t + alpha), sends step 1, delivered to chip1 at 10 + 2t + 2 alpha: the end of the run.
  const double t = 1048576 / 100e9, alpha = 1e-6, late = 10e-6;
  for (const std::string engine : {"simgrid", "contention-free"}) {
    nlohmann::json j =
        run_json({"--topology", "switch:2", "--collective", "allreduce", "--algorithm", "ring", "--size",
                  "2MiB", "--fault", "late-chip:1@10us", "--explain", "--engine", engine});
    CAPTURE(engine);
    check_critical_path(j);
    CHECK(j["time_s"].get<double>() == Approx(late + 2 * t + 2 * alpha).epsilon(1e-12));
    const auto& path = j["explain"]["critical_path"];
    REQUIRE(path.size() == 3);
    CHECK(path[0]["kind"] == "compute");
    CHECK(path[0]["what"] == "late start");
    CHECK(path[0]["chip"] == 1);
    CHECK(path[1]["kind"] == "transfer");
    CHECK(path[1]["src"] == 1);
    CHECK(path[1]["dst"] == 0);
    CHECK(path[1]["end_s"].get<double>() == Approx(late + t + alpha).epsilon(1e-12));
    CHECK(path[2]["src"] == 0);
    CHECK(path[2]["dst"] == 1);
    CHECK(j["explain"]["last_chip"] == 1);
    // chip0 was busy sending 2t and waited the rest; chip1 computed ("late start") 10 us, sent 2t, and
    // waited only for the latency of chip0's last chunk... and its own first one's.
    const auto& chips = j["explain"]["chips"];
    CHECK(chips[0]["busy_s"].get<double>() == Approx(2 * t).epsilon(1e-12));
    CHECK(chips[0]["wait_s"].get<double>() == Approx(late + alpha).epsilon(1e-9));
    CHECK(chips[1]["busy_s"].get<double>() == Approx(late + 2 * t).epsilon(1e-12));
    CHECK(chips[1]["wait_s"].get<double>() == Approx(2 * alpha).epsilon(1e-9));
  }
}

TEST_CASE("the critical path is as long as the run on trn3, in both engines and with striped paths") {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--collective", "allreduce", "--algorithm", "ring", "--size", "4MiB"},
           {"--collective", "alltoall", "--algorithm", "direct", "--size", "4MiB"},
           {"--collective", "allreduce", "--algorithm", "hierarchical", "--size", "4MiB"}}) {
    std::vector<std::string> command{"--topology", "trn3", "--explain"};
    command.insert(command.end(), args.begin(), args.end());
    nlohmann::json j = run_json(command);
    CAPTURE(args[3]);
    check_links(j);
    check_critical_path(j);
    CHECK(j["explain"]["critical_unattributed_s"] == 0.0);
    CHECK(j["explain"]["chips"].size() == 144);
  }
}

TEST_CASE(
    "an in-switch reduction's uploads and downloads are link traffic, and its reduction is on the path") {
  // nvl72 with reduction-capable switches charging 100 GB/s: the path ends with the last step's upload,
  // the switch reducing that step's chunk, and the download back.
  nlohmann::json j = run_json({"--topology", "nvl72", "--set", "switch_reduction=true", "--set",
                               "switch_reduce_bandwidth=100GBps", "--collective", "allreduce", "--algorithm",
                               "switch-reduce", "--size", "64MiB", "--explain"});
  check_links(j);
  check_critical_path(j);
  const auto& why = j["explain"];
  CHECK(why["critical_unattributed_s"] == 0.0);
  const auto& path = why["critical_path"];
  REQUIRE(path.size() >= 3);
  const auto& reduce = path[path.size() - 2];
  CHECK(reduce["kind"] == "compute");
  CHECK(reduce["what"] == "switch reduction");
  const double chunk = 67108864.0 / static_cast<double>(why["steps"].size());
  CHECK(reduce["end_s"].get<double>() - reduce["start_s"].get<double>() ==
        Approx(chunk / 100e9).epsilon(1e-9));
  CHECK(path.back()["src"] == -1);
  CHECK(path.back()["dst"] == j["explain"]["last_chip"]);
  CHECK(path[path.size() - 3]["dst"] == -1);
  // Each chip uploads its 64 MiB and downloads the 64 MiB result, each over one chip-switch link.
  CHECK(j["links"]["link_bytes"].get<std::uint64_t>() == 72 * 2 * std::uint64_t{67108864});
}
