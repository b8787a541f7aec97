// One SimGrid run per preset through the CLI: the simulated time equals the preset's closed-form
// model (where it is exact: contention-free rings, direct all-to-all on tori), and the bound uses the
// per-chip delivered injection bandwidth of hardware.md: bound = min route latency + bytes a chip must
// move / injection.
#include <catch2/catch.hpp>

#include <fstream>

#include "cli_runner.hpp"

using ultrasim::test::run_exact;
using ultrasim::test::run_json;

namespace {

constexpr double kMiB = 1 << 20;

}  // namespace

TEST_CASE("trn3-gen1: ring all-reduce is exact, the bound uses 540 + 120 GB/s per chip", "[presets]") {
  auto j = run_exact("trn3-gen1", "allreduce", "ring", "64MiB");
  CHECK(j["chips"] == 64);
  CHECK(double(j["bound_s"]) == Approx(0.5e-6 + 2.0 * 63 / 64 * 64 * kMiB / 660e9).epsilon(1e-9));
}

TEST_CASE("trn2: direct all-to-all on the 4x4 torus is exact, injection 4 x 230.4 GB/s", "[presets]") {
  auto j = run_exact("trn2", "alltoall", "direct", "64MiB");
  CHECK(double(j["bound_s"]) == Approx(1e-6 + 15.0 / 16 * 64 * kMiB / 921.6e9).epsilon(1e-9));
  // Dimension-ordered routes keep the rank-order ring free of contention (its row-to-row steps take
  // the x wrap link, then a y link, which no other step uses in that direction): exact too.
  run_exact("trn2", "allreduce", "ring", "64MiB");
}

TEST_CASE("trn2-ultraserver: ring all-reduce is exact, injection 921.6 + 230.4 GB/s", "[presets]") {
  auto j = run_exact("trn2-ultraserver", "allreduce", "ring", "64MiB");
  CHECK(double(j["bound_s"]) == Approx(1e-6 + 2.0 * 63 / 64 * 64 * kMiB / 1152e9).epsilon(1e-9));
}

TEST_CASE("tpu-v5p:4x4x4: direct all-to-all is exact, injection 6 x 90 GB/s", "[presets]") {
  auto j = run_exact("tpu-v5p:4x4x4", "alltoall", "direct", "64MiB");
  CHECK(double(j["bound_s"]) == Approx(1e-6 + 63.0 / 64 * 64 * kMiB / 540e9).epsilon(1e-9));
  run_exact("tpu-v5p:4x4x4", "allreduce", "ring", "64MiB");
}

// nvl72 and hgx-h100 stripe over their switch planes by default (multipath=auto): each ring step sends
// n/p over every plane at once, so it costs alpha + (n/p) / (the GPU's whole delivered bandwidth), alpha
// being a route's NVLink, NVSwitch and NVLink latencies (182 + 364 + 182 ns). Under the fabric alone
// (stack=ideal: their default stack, nccl, adds its launch and step latencies). Their switches reduce
// (NVLS), so the bound is a GPU's buffer sent once and the sum received once: n at the delivered rate.
TEST_CASE("nvl72: ring all-reduce is exact, striped, a step moves at 18 x 41.1 = 740 GB/s per GPU",
          "[presets]") {
  auto j = run_exact("nvl72", "allreduce", "ring", "72MiB", {"stack=ideal"});
  const double n = 72 * kMiB, alpha = 182e-9 + 364e-9 + 182e-9;
  CHECK(j["parameters"]["multipath"] == "auto");
  CHECK(double(j["bound_s"]) == Approx(alpha + n / 740e9).epsilon(1e-9));
  // A step's 1 MiB is cut into whole bytes, 58255 on the busiest of the 18 links (1048576 / 18 = 58254.2).
  CHECK(double(j["time_s"]) == Approx(2 * 71 * (alpha + 58255 / (50e9 * 370 / 450))).epsilon(1e-9));
}

TEST_CASE("hgx-h100: ring all-reduce is exact, striped, a step moves at 450 x 370/450 = 370 GB/s per GPU",
          "[presets]") {
  auto j = run_exact("hgx-h100", "allreduce", "ring", "64MiB", {"stack=ideal"});
  const double n = 64 * kMiB, alpha = 182e-9 + 364e-9 + 182e-9;
  CHECK(double(j["bound_s"]) == Approx(alpha + n / 370e9).epsilon(1e-9));
  // Within the rounding of a step's 8 MiB into whole bytes per bundle (5:4:4:5 of 8388608 is not whole).
  CHECK(double(j["time_s"]) == Approx(2 * 7 * (alpha + n / 8 / 370e9)).epsilon(1e-6));
}

// The acceptance: at 4 GiB with zero latencies, ring all-reduce busbw equals the GPU's delivered
// bandwidth striped (NVL72 18 x 50 x 370/450 = 740 GB/s; HGX 18 x 25 x 370/450 = 370 GB/s), and one
// path's without: NVL72 one NVLink (41.1 GB/s), HGX the route's bundle (5 NVLinks to NVSwitch 0: 102.8).
TEST_CASE("striped ring all-reduce at 4 GiB reaches the per-GPU delivered bandwidth on nvl72 and hgx-h100",
          "[presets][multipath]") {
  auto busbw = [](const std::string& topology, const std::string& policy) {
    auto j = run_exact(topology, "allreduce", "ring", "4GiB",
                       {"nvlink_latency=0", "switch_latency=0", "multipath=" + policy, "stack=ideal"});
    return double(j["busbw_GBps"]);
  };
  CHECK(busbw("nvl72", "stripe") == Approx(740).epsilon(0.005));
  CHECK(busbw("nvl72", "single") == Approx(50 * 370.0 / 450).epsilon(0.005));
  CHECK(busbw("hgx-h100", "stripe") == Approx(370).epsilon(0.005));
  CHECK(busbw("hgx-h100", "single") == Approx(125 * 370.0 / 450).epsilon(0.005));
}

TEST_CASE("nvl72: one 1 GiB transfer between two GPUs gets all 18 links striped and one link without",
          "[presets][multipath]") {
  // A traffic matrix with a single entry: GPU 0 sends 1 GiB to GPU 1, nothing else moves.
  std::string matrix = ultrasim::test::temp_path("one-transfer.csv");
  {
    std::ofstream out(matrix);
    for (int r = 0; r < 72; ++r) {
      for (int c = 0; c < 72; ++c) out << (c ? "," : "") << (r == 0 && c == 1 ? "1GiB" : "0");
      out << "\n";
    }
  }
  auto rate = [&](const std::string& policy) {
    auto j = run_json({"--topology", "nvl72", "--collective", "alltoallv", "--algorithm", "direct",
                       "--traffic-matrix", matrix, "--set", "nvlink_latency=0", "--set", "switch_latency=0",
                       "--set", "multipath=" + policy, "--stack", "ideal"});
    CHECK(j["verified"] == true);
    return double(1 << 30) / double(j["time_s"]) / 1e9;
  };
  CHECK(rate("stripe") == Approx(18 * 50 * 370.0 / 450).epsilon(1e-6));
  CHECK(rate("single") == Approx(50 * 370.0 / 450).epsilon(1e-6));
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

// NVLS over every NVSwitch plane: verified and exact (SimGrid = model_s), and at 8 GiB the bus bandwidth
// each preset's engine rate (switch_reduce_bandwidth) was fitted to (results/validation/).
TEST_CASE("nvls on nvl72 and hgx-h100 is exact and reaches the measured NVLS bus bandwidth at 8 GiB",
          "[presets][nvls]") {
  run_exact("hgx-h100", "allreduce", "nvls", "64MiB");
  run_exact("nvl72", "allreduce", "nvls", "64MiB");
  CHECK(double(run_exact("hgx-h100", "allreduce", "nvls", "8GiB")["busbw_GBps"]) ==
        Approx(478.87).epsilon(0.002));
  CHECK(double(run_exact("nvl72", "allreduce", "nvls", "8GiB")["busbw_GBps"]) ==
        Approx(834.57).epsilon(0.002));
  // The warm-up: min(buffer, nvls_warmup_bytes) / nvls_warmup_bandwidth more, in the model and the run
  // alike; it grows with the size (16 MiB) up to its cap (256 MiB: all of hgx-h100's 53.1 MB).
  for (auto [size, bytes] : {std::pair{"16MiB", 16.0 * kMiB}, std::pair{"256MiB", 53.1e6}}) {
    const double warm = run_exact("hgx-h100", "allreduce", "nvls", size)["model_s"];
    const double cold =
        run_exact("hgx-h100", "allreduce", "nvls", size, {"nvls_warmup_bandwidth=inf"})["model_s"];
    CHECK(warm - cold == Approx(bytes / 530.1e9).epsilon(1e-9));
  }
  // On one switch there is one plane: nvls is switch-reduce, to the last bit.
  const std::vector<std::string> sets{"switch_reduction=true", "switch_reduce_bandwidth=50GBps"};
  CHECK(run_exact("switch:8", "allreduce", "nvls", "1000003", sets)["time_s"] ==
        run_exact("switch:8", "allreduce", "switch-reduce", "1000003", sets)["time_s"]);
  // auto (nccl's candidates: ring, double-binary-tree, nvls) takes NVLS for large all-reduces, as NCCL
  // does on both systems, and ring with LL for the smallest.
  auto picked = [](const std::string& topology, const std::string& size) {
    auto j = run_json(
        {"--topology", topology, "--collective", "allreduce", "--algorithm", "auto", "--size", size});
    return j["algorithm"].get<std::string>() + "/" + j["stack"]["protocol"].get<std::string>();
  };
  CHECK(picked("hgx-h100", "1GiB") == "nvls/Simple");
  CHECK(picked("nvl72", "1GiB") == "nvls/Simple");
  CHECK(picked("hgx-h100", "8") == "ring/LL");
}
