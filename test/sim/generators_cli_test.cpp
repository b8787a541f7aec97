// One SimGrid run per generic generator, through the command line, where the closed-form model is exact:
// the simulated time equals model_s within 0.1 %, and model_s equals the formula written out here.
#include <catch2/catch.hpp>

#include "cli_runner.hpp"

using ultrasim::test::expect_input_error;
using ultrasim::test::run_cli;
using ultrasim::test::run_json;

namespace {

constexpr double kB = 100e9;      // link_bandwidth default
constexpr double kLink = 500e-9;  // link_latency default

// Runs the collective, checks it is exact (time = model_s, verified, not below bound_s), returns model_s.
double simulated_model(const std::string& topology, const std::string& collective,
                       const std::string& algorithm, const std::string& size,
                       const std::vector<std::string>& sets = {}) {
  return ultrasim::test::run_exact(topology, collective, algorithm, size, sets)["model_s"];
}

}  // namespace

TEST_CASE("mesh:8 direct all-to-all: every part on its own link, a + (n/8)/B", "[generators][sim]") {
  CHECK(simulated_model("mesh:8", "alltoall", "direct", "1MiB") ==
        Approx(kLink + (1 << 20) / 8 / kB).epsilon(1e-12));
}

TEST_CASE("clos:4x4 ring all-reduce: 30 chained hops, 8 of them through a spine", "[generators][sim]") {
  // 2(p-1) = 30 steps of n/p; along the chain of 30 hops, at most 8 cross leaves (4 links, 2 us), the
  // others stay under a leaf (2 links, 1 us).
  const double n = 64 << 20;
  CHECK(simulated_model("clos:4x4", "allreduce", "ring", "64MiB") ==
        Approx(30 * n / 16 / kB + 8 * 4 * kLink + 22 * 2 * kLink).epsilon(1e-12));
}

TEST_CASE("fattree:4 ring all-reduce: hops of 2, 4, 2 and 6 links repeat along the ring",
          "[generators][sim]") {
  // ranks r -> r+1: same edge (1 us), same pod (2 us), same edge, next pod (3 us); 30 hops = 7 periods of
  // 7 us plus the two longest neighbours (1 + 3 us).
  const double n = 64 << 20;
  CHECK(simulated_model("fattree:4", "allreduce", "ring", "64MiB") ==
        Approx(30 * n / 16 / kB + (7 * 7 + 4) * 1e-6).epsilon(1e-12));
}

TEST_CASE("dragonfly direct all-to-all: the terminal links are the bottleneck", "[generators][sim]") {
  // 72 chips; 1 MiB = 40 parts of 14564 B and 32 of 14563: chip 0 receives 71 x 14564 B over its one
  // terminal link; the longest route is terminal, local, global (1.5 us), local, terminal.
  CHECK(simulated_model("dragonfly", "alltoall", "direct", "1MiB") ==
        Approx(4 * kLink + 1.5e-6 + 71 * 14564 / kB).epsilon(1e-12));
}

TEST_CASE("cluster:2:switch:4 ring all-reduce: paced by the 25 GB/s NIC, one 16 us crossing exposed",
          "[generators][sim]") {
  // 8 chips; the ring crosses domains twice (chip3 -> chip4 and chip7 -> chip0, each through a chip of
  // the source domain, then a rail: 1 us + 15 us). Every step waits for those n/8 transfers at 25 GB/s.
  const double n = 64 << 20;
  CHECK(simulated_model("cluster:2:switch:4", "allreduce", "ring", "64MiB") ==
        Approx(14 * n / 8 / 25e9 + 16e-6).epsilon(1e-12));
}

TEST_CASE("cluster:2:switch:4 hierarchical all-reduce by domain: only a quarter of the buffer crosses",
          "[generators][sim]") {
  // Ring reduce-scatter and all-gather inside each switch:4 (3 + 3 steps of n/4 at 100 GB/s, 1 us), and
  // between them a ring all-reduce of each column's n/4 across the 2 domains over its rail (2 steps of
  // n/8 at 25 GB/s, 15 us): against the flat ring's 14 steps of n/8 over the NIC.
  const double n = 64 << 20;
  CHECK(simulated_model("cluster:2:switch:4", "allreduce", "hierarchical", "64MiB", {"groups=domain"}) ==
        Approx(6 * (1e-6 + n / 4 / kB) + 2 * (15e-6 + n / 8 / 25e9)).epsilon(1e-12));
}

TEST_CASE("a cluster states its domains and its inner preset's parameters, settable with --set",
          "[generators][sim]") {
  auto r = run_cli({"topology", "cluster:2:torus:2x2", "--set", "link_bandwidth=50GBps", "--set",
                    "scaleout=spine", "--format", "json"});
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["chips"] == 8);
  CHECK(j["parameters"]["link_bandwidth"] == 50e9);
  CHECK(j["parameters"]["nic_bandwidth"] == 25e9);
  CHECK(j["parameters"]["scaleout"] == "spine");
  int domain1 = 0;
  for (const auto& node : j["nodes"])
    if (node["kind"] == "chip") domain1 += node["domain"] == 1;
  CHECK(domain1 == 4);
  expect_input_error({"topology", "cluster:0:trn3"}, "invalid domain count '0'");
  expect_input_error({"topology", "cluster:2:trn4"}, "did you mean 'trn3'");
  expect_input_error({"topology", "clos:8x64"}, "> radix 64");
  expect_input_error({"topology", "fattree:3"}, "K must be even");
}
