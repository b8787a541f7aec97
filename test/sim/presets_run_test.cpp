// One SimGrid run per preset through the CLI: the simulated time equals the preset's closed-form
// model (where it is exact: contention-free rings, direct all-to-all on tori), and the bound uses the
// per-chip delivered injection bandwidth of hardware.md: bound = min route latency + bytes a chip must
// move / injection.
#include <catch2/catch.hpp>

#include "cli_runner.hpp"

using ultrasim::test::run_json;

namespace {

nlohmann::json run_exact(const std::string& topology, const std::string& collective,
                         const std::string& algorithm, const std::string& size) {
  auto j = run_json(
      {"--topology", topology, "--collective", collective, "--algorithm", algorithm, "--size", size});
  INFO(topology << " " << collective << " " << algorithm << " " << size << ": time " << j["time_s"]
                << " model " << j["model_s"]);
  CHECK(j["verified"] == true);
  double time = j["time_s"], model = j["model_s"];
  CHECK(std::abs(time - model) <= 1e-3 * model);
  return j;
}

constexpr double kMiB = 1 << 20;

}  // namespace

TEST_CASE("trn3-gen1: ring all-reduce is exact; the bound uses 540 + 120 GB/s per chip", "[presets]") {
  auto j = run_exact("trn3-gen1", "allreduce", "ring", "64MiB");
  CHECK(j["chips"] == 64);
  CHECK(double(j["bound_s"]) == Approx(0.5e-6 + 2.0 * 63 / 64 * 64 * kMiB / 660e9).epsilon(1e-9));
}

TEST_CASE("trn2: direct all-to-all on the 4x4 torus is exact; injection 4 x 230.4 GB/s", "[presets]") {
  auto j = run_exact("trn2", "alltoall", "direct", "64MiB");
  CHECK(double(j["bound_s"]) == Approx(1e-6 + 15.0 / 16 * 64 * kMiB / 921.6e9).epsilon(1e-9));
}

TEST_CASE("trn2-ultraserver: ring all-reduce is exact; injection 921.6 + 230.4 GB/s", "[presets]") {
  auto j = run_exact("trn2-ultraserver", "allreduce", "ring", "64MiB");
  CHECK(double(j["bound_s"]) == Approx(1e-6 + 2.0 * 63 / 64 * 64 * kMiB / 1152e9).epsilon(1e-9));
}

TEST_CASE("tpu-v5p:4x4x4: direct all-to-all is exact; injection 6 x 90 GB/s", "[presets]") {
  auto j = run_exact("tpu-v5p:4x4x4", "alltoall", "direct", "64MiB");
  CHECK(double(j["bound_s"]) == Approx(1e-6 + 63.0 / 64 * 64 * kMiB / 540e9).epsilon(1e-9));
}

// nvl72 and hgx-h100 default to striping over the switch planes (multipath=auto). Until striping is in
// the simulator a route takes one path, so the ring runs at one link's (bundle's) rate: that value is
// pinned below only while no `multipath` parameter exists.
TEST_CASE("nvl72: ring all-reduce is exact; the bound uses 18 x 41.1 = 740 GB/s per GPU", "[presets]") {
  auto j = run_exact("nvl72", "allreduce", "ring", "72MiB");
  const double n = 72 * kMiB, alpha = 250e-9 + 500e-9 + 250e-9;
  CHECK(double(j["bound_s"]) == Approx(alpha + 2.0 * 71 / 72 * n / 740e9).epsilon(1e-9));
  if (!j["parameters"].contains("multipath"))
    CHECK(double(j["time_s"]) == Approx(2 * 71 * (alpha + n / 72 / (50e9 * 370 / 450))).epsilon(1e-9));
}

TEST_CASE("hgx-h100: ring all-reduce is exact; the bound uses 450 x 370/450 = 370 GB/s per GPU",
          "[presets]") {
  auto j = run_exact("hgx-h100", "allreduce", "ring", "64MiB");
  const double n = 64 * kMiB, alpha = 1e-6;
  CHECK(double(j["bound_s"]) == Approx(alpha + 2.0 * 7 / 8 * n / 370e9).epsilon(1e-9));
  if (!j["parameters"].contains("multipath"))  // one 5-link bundle: 125 GB/s raw
    CHECK(double(j["time_s"]) == Approx(2 * 7 * (alpha + n / 8 / (125e9 * 370 / 450))).epsilon(1e-9));
}

TEST_CASE("trn3 with rack_switch=chips: ring all-reduce is exact, the crossbar default unchanged",
          "[presets]") {
  auto chips = run_json({"--topology", "trn3", "--set", "rack_switch=chips", "--collective", "allreduce",
                         "--algorithm", "ring", "--size", "144MiB"});
  CHECK(chips["verified"] == true);
  CHECK(double(chips["time_s"]) == Approx(double(chips["model_s"])).epsilon(1e-3));
  CHECK(chips["parameters"]["rack_switch"] == "chips");
  // Same bound: the chips' links and injection are unchanged (5 x 60 GB/s to the rack tier).
  CHECK(double(chips["bound_s"]) == Approx(0.5e-6 + 2.0 * 143 / 144 * 144 * kMiB / 660e9).epsilon(1e-9));
}
