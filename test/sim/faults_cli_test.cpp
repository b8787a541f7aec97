// Faults and stragglers through the command line: a link failing mid-run (the flow in flight resent on
// the detour, the ring slowed by exactly what the detour costs), a chip cut off (an error, not a hang),
// a degraded link (max-min shares), late and slow chips, a switch lost on trn3, and the fault-free
// comparison every faulty result carries.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>

#include "cli_runner.hpp"
#include "traffic_matrices.hpp"

using namespace ultrasim::test;

namespace {

const double kBandwidth = 100e9, kLinkLatency = 500e-9;  // generators' defaults

struct TracedFlow {
  int src, dst, step;
  double start, end;  // s
};

// The transfers of a --trace file (complete events of category "transfer").
std::vector<TracedFlow> traced_flows(const std::string& path) {
  std::vector<TracedFlow> out;
  const nlohmann::json trace = nlohmann::json::parse(read_file(path));
  for (const auto& e : trace["traceEvents"])
    if (e.value("cat", "") == "transfer")
      out.push_back(TracedFlow{e["args"]["src"], e["args"]["dst"], e["args"]["step"],
                               e["ts"].get<double>() * 1e-6,
                               (e["ts"].get<double>() + e["dur"].get<double>()) * 1e-6});
  return out;
}

std::string matrix_file(const std::string& name, const Rows& rows) {
  std::string path = temp_path(name + ".json");
  write_matrix_json(path, rows);
  return path;
}

// Ring all-reduce on p chips in rank order, chunk n bytes, step by step: chip i ends step s when its own
// send has left (n / B after its start) and its predecessor's chunk has arrived (that chip's start +
// n / B + the latency of edge i-1 -> i). From `fail_at` on, edge `a` -> a+1 costs `detour` latency; the
// chunk in flight on it then is sent again, whole, at `fail_at`.
double ring_time(int p, double n_over_b, const std::vector<double>& latency, int a, double fail_at,
                 double detour) {
  std::vector<double> end(p, 0.0);
  for (int s = 0; s < 2 * (p - 1); ++s) {
    std::vector<double> next(p);
    for (int i = 0; i < p; ++i) {
      const int j = (i + p - 1) % p;
      double start = end[j], lat = latency[j];
      if (j == a && start >= fail_at) lat = detour;
      if (j == a && start < fail_at && start + n_over_b > fail_at) start = fail_at, lat = detour;
      next[i] = std::max(end[i] + n_over_b, start + n_over_b + lat);
    }
    end = next;
  }
  return *std::max_element(end.begin(), end.end());
}

}  // namespace

TEST_CASE(
    "a ring all-reduce on torus:4x4 with a link down mid-run finishes over the detour, late by what the "
    "detour costs") {
  // The ring runs in rank order: i -> i+1 is one link, except 3->4, 7->8, 11->12, 15->0 (two). With
  // chip1-chip2 down, 1 -> 2 goes round a square (three links) on link directions the ring leaves free.
  const std::string trace = temp_path("ring_fault.json");
  auto j = run_json({"--topology", "torus:4x4", "--collective", "allreduce", "--algorithm", "ring", "--size",
                     "16MiB", "--fault", "link-down:chip1-chip2@100us", "--trace", trace});
  std::vector<double> latency(16, kLinkLatency);
  for (int i : {3, 7, 11, 15}) latency[i] = 2 * kLinkLatency;
  const double n_over_b = (16 << 20) / 16 / kBandwidth;
  const double fault_free = ring_time(16, n_over_b, latency, 1, 1.0, 0);
  const double expected = ring_time(16, n_over_b, latency, 1, 100e-6, 3 * kLinkLatency);
  CHECK(j["verified"] == true);
  CHECK(j["engine"] == "simgrid");
  CHECK(j["fault_free_time_s"].get<double>() == Approx(fault_free).epsilon(1e-12));
  CHECK(j["time_s"].get<double>() == Approx(expected).epsilon(1e-12));
  CHECK(j["time_s"].get<double>() > j["fault_free_time_s"].get<double>() + 1e-6);
  CHECK(j["slowdown"].get<double>() == Approx(expected / fault_free).epsilon(1e-12));
  CHECK(j["faults"] == nlohmann::json::array({"link-down:chip1-chip2@100us"}));
  // The chunk in flight at 100 us was dropped and sent again, whole, from 100 us.
  CHECK(j["restarted_flows"] == 1);
  CHECK(j["resent_bytes"] == (16 << 20) / 16);
  int after = 0;
  for (const TracedFlow& f : traced_flows(trace))
    if (f.src == 1 && f.dst == 2 && f.start >= 100e-6 - 1e-12) {
      CHECK(f.end - f.start == Approx(n_over_b + 3 * kLinkLatency).epsilon(1e-9));  // on the detour
      ++after;
    }
  CHECK(after == 30 - 9);  // steps 9..29 (step 9 was in flight at 100 us)
}

TEST_CASE("a flow in flight when its link fails is resent whole on the detour from the failure time") {
  // ring:4, 10 MB from 0 to 1 and 10 MB from 3 to 2 (100 us each alone). chip0-chip1 fails at 20 us:
  // 0 -> 1 starts again, whole, on 0 -> 3 -> 2 -> 1 (three links), where it shares 3 -> 2 with the other
  // flow: both at B/2 until 3 -> 2 ends at 20 + 8 MB / (B/2) = 180 us, then 0 -> 1 alone for its last
  // 2 MB (20 us). So the detour is used for real, under every multipath policy (hash included, whose
  // pairs have one route and no endpoint of their own).
  const std::string m =
      matrix_file("two_flows", {{0, 10000000, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 10000000, 0}});
  for (const std::string policy : {"single", "hash"})
    for (const std::string fault : {"link-down:chip0-chip1@20us", "link-down:chip0-chip1@20us-40us"}) {
      INFO(policy << " " << fault);
      auto j = run_json({"--topology", "ring:4", "--collective", "alltoallv", "--algorithm", "direct",
                         "--traffic-matrix", m, "--set", "multipath=" + policy, "--fault", fault});
      CHECK(j["fault_free_time_s"].get<double>() == Approx(10e6 / kBandwidth + kLinkLatency).epsilon(1e-12));
      // Back up at 40 us changes nothing for a flow already on its detour.
      CHECK(j["time_s"].get<double>() == Approx(200e-6 + 3 * kLinkLatency).epsilon(1e-12));
      CHECK(j["restarted_flows"] == 1);
      CHECK(j["resent_bytes"] == 10000000);
      CHECK(j["bytes_sent"] == 20000000);
    }
}

TEST_CASE("after a link comes back up, new flows take the direct route again") {
  // Link down from 0 to 50 us: ring steps started before 50 us take the 3-link detour, later ones not.
  const std::string trace = temp_path("ring_window.json");
  auto j = run_json({"--topology", "torus:4x4", "--collective", "allreduce", "--algorithm", "ring", "--size",
                     "16MiB", "--fault", "link-down:chip1-chip2@0-50us", "--trace", trace});
  CHECK(j["restarted_flows"] == 0);
  const double n_over_b = (16 << 20) / 16 / kBandwidth;
  int detours = 0, direct = 0;
  for (const TracedFlow& f : traced_flows(trace))
    if (f.src == 1 && f.dst == 2) {
      const bool on_detour = std::abs(f.end - f.start - (n_over_b + 3 * kLinkLatency)) < 1e-12;
      CHECK(on_detour == (f.start < 50e-6));
      (on_detour ? detours : direct)++;
    }
  CHECK(detours > 0);
  CHECK(direct > 0);
}

TEST_CASE("a chip cut off by failed links ends the run with an error naming it and the faults, not a hang") {
  for (const std::string at : {"100us", "0"}) {
    auto r = run_cli({"run", "--topology", "torus:4x4", "--collective", "allreduce", "--algorithm", "ring",
                      "--size", "16MiB", "--fault", "link-down:chip5-*@" + at, "--fault",
                      "link-down:*-chip5@" + at});
    INFO(r.err);
    CHECK(r.status == 3);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Catch::StartsWith("ultrasim: error: link faults cut chip5 off at"));
    CHECK_THAT(r.err, Catch::Contains("failed: link-down:chip5-*@" + at + ", link-down:*-chip5@" + at));
  }
}

TEST_CASE("a degraded link slows exactly the flows crossing it, by max-min sharing") {
  // switch:4, B bytes each: 0->1, 2->1, 2->3. chip1's link at half its bandwidth carries 0->1 and 2->1:
  // B/4 each. 2->3 gets what chip2's uplink leaves, 3B/4, and ends first; then the two go on at B/4.
  // Fault-free: every flow gets B/2.
  const std::uint64_t n = 8000000;
  const std::string m = matrix_file("degrade", {{0, n, 0, 0}, {0, 0, 0, 0}, {0, n, 0, n}, {0, 0, 0, 0}});
  const std::string trace = temp_path("degrade_trace.json");
  auto j = run_json({"--topology", "switch:4", "--collective", "alltoallv", "--algorithm", "direct",
                     "--traffic-matrix", m, "--fault", "degrade:chip1-switch0=0.5", "--trace", trace});
  const double alpha = 2 * kLinkLatency, t = n / kBandwidth;
  std::map<std::pair<int, int>, double> end;
  for (const TracedFlow& f : traced_flows(trace)) end[{f.src, f.dst}] = f.end;
  CHECK(end[{0, 1}] == Approx(4 * t + alpha).epsilon(1e-12));
  CHECK(end[{2, 1}] == Approx(4 * t + alpha).epsilon(1e-12));
  CHECK(end[{2, 3}] == Approx(t / 0.75 + alpha).epsilon(1e-12));
  CHECK(j["time_s"].get<double>() == Approx(4 * t + alpha).epsilon(1e-12));
  CHECK(j["fault_free_time_s"].get<double>() == Approx(2 * t + alpha).epsilon(1e-12));
  CHECK(j["engine"] == "simgrid");  // the contention-free engine leaves link faults to SimGrid
  // A degradation that ends at 40 us (t / 2): until then the three flows ran as above (0->1 and 2->1
  // have 1/8 done, 2->3 3/8); then every flow gets B/2: 2->3 ends 1.25 t later, the others 1.75 t.
  auto k = run_json({"--topology", "switch:4", "--collective", "alltoallv", "--algorithm", "direct",
                     "--traffic-matrix", m, "--fault", "degrade:chip1-switch0=0.5@0-40us"});
  CHECK(k["time_s"].get<double>() == Approx(2.25 * t + alpha).epsilon(1e-9));
}

TEST_CASE("a late chip delays a ring all-reduce by exactly its lateness, in both engines") {
  for (const std::string engine : {"auto", "simgrid"}) {
    auto j = run_json({"--topology", "switch:8", "--collective", "allreduce", "--algorithm", "ring", "--size",
                       "16MiB", "--fault", "late-chip:3@10us", "--engine", engine});
    INFO(engine);
    CHECK(j["time_s"].get<double>() == Approx(j["fault_free_time_s"].get<double>() + 10e-6).epsilon(1e-12));
    CHECK(j["engine"] == (engine == "auto" ? "contention-free" : "simgrid"));
    CHECK(j["verified"] == true);
  }
}

TEST_CASE("a slow chip's reductions take its factor longer, and only its own") {
  const std::string trace = temp_path("slow.json");
  auto j =
      run_json({"--topology", "switch:4", "--collective", "allreduce", "--algorithm", "ring", "--size", "4MB",
                "--set", "reduce_bandwidth=10GBps", "--fault", "slow-chip:2=3", "--trace", trace});
  const double reduce = 1e6 / 10e9;  // a 1 MB chunk at 10 GB/s
  int slow = 0, normal = 0;
  const nlohmann::json events = nlohmann::json::parse(read_file(trace))["traceEvents"];
  for (const auto& e : events)
    if (e.value("cat", "") == "compute") {
      const double seconds = e["dur"].get<double>() * 1e-6;
      const bool on_slow_chip = e["pid"] == 2;
      CHECK(seconds == Approx((on_slow_chip ? 3 : 1) * reduce).epsilon(1e-9));
      ++(on_slow_chip ? slow : normal);
    }
  CHECK(slow == 3);  // p - 1 reduce-scatter steps
  CHECK(normal == 9);
  CHECK(j["time_s"].get<double>() > j["fault_free_time_s"].get<double>() + 2 * reduce - 1e-12);
}

TEST_CASE("losing a server switch on trn3 reroutes its chips through the rack switches") {
  auto j = run_json({"--topology", "trn3", "--collective", "alltoall", "--algorithm", "direct", "--size",
                     "64MiB", "--fault", "switch-down:server0_switch@5us", "--stack", "ideal"});
  CHECK(j["verified"] == true);
  CHECK(j["restarted_flows"].get<int>() > 0);
  CHECK(j["time_s"].get<double>() > j["fault_free_time_s"].get<double>());
}

TEST_CASE("fault runs are deterministic, and faults the engine cannot model are refused") {
  const std::vector<std::string> args{"run",
                                      "--topology",
                                      "torus:4x4",
                                      "--collective",
                                      "allreduce",
                                      "--algorithm",
                                      "ring",
                                      "--size",
                                      "1MiB",
                                      "--fault",
                                      "link-down:chip1-chip2@3us",
                                      "--format",
                                      "json"};
  auto first = run_cli(args), second = run_cli(args);
  CHECK(first.status == 0);
  CHECK(first.out == second.out);
  expect_input_error(
      {"run", "--topology", "torus:4x4", "--collective", "allreduce", "--algorithm", "ring", "--size", "1MiB",
       "--fault", "link-down:chip1-chip2@3us", "--engine", "contention-free"},
      "--engine contention-free cannot model link faults");
  expect_input_error(
      {"run", "--topology", "trn3", "--collective", "allreduce", "--algorithm", "switch-reduce", "--size",
       "1MiB", "--set", "switch_reduction=true", "--fault", "switch-down:server0_switch@1us"},
      "cannot run with switch-reduce");
  expect_input_error({"run", "--topology", "switch:4", "--collective", "allreduce", "--algorithm", "ring",
                      "--size", "1MiB", "--fault", "late-chip:9@1us"},
                     "rank 9 is out of range");
}

TEST_CASE("a sweep runs every point with its faults and reports each point's slowdown") {
  const std::string file = temp_path("fault_sweep.json");
  std::ofstream(file) << R"({"topologies": ["switch:8"], "collectives": ["allreduce"], "algorithms": ["ring"],
                             "sizes": ["1MiB", "4MiB"], "faults": ["late-chip:0@5us"]})";
  auto r = run_cli({"sweep", "--file", file, "--jobs", "1"});
  REQUIRE(r.status == 0);
  std::istringstream lines(r.out);
  int rows = 0;
  for (std::string line; std::getline(lines, line);) {
    auto row = nlohmann::json::parse(line);
    CHECK(row["time_s"].get<double>() ==
          Approx(row["fault_free_time_s"].get<double>() + 5e-6).epsilon(1e-12));
    CHECK(row["faults"] == nlohmann::json::array({"late-chip:0@5us"}));
    ++rows;
  }
  CHECK(rows == 2);
}
