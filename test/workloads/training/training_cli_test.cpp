// Training steps (`ultrasim workload FILE`, "workload": "training"): stages run in order, communication
// overlaps a stage's compute, and the step's time, exposed communication, MFU and energy are what the
// stages' closed forms say.
#include <catch2/catch.hpp>

#include <fstream>

#include "cli_runner.hpp"

using namespace ultrasim::test;
using nlohmann::json;

namespace {

// A ring all-reduce of 64 MiB on switch:8: 14 steps of (1 us + 8 MiB / 100 GB/s).
const double kAllreduce = 14 * (1e-6 + 8388608 / 100e9);

}  // namespace

TEST_CASE("a stage's communication hides behind its compute, and shows when it is longer") {
  json r = workload_json(
      R"({"workload": "training", "topology": "switch:8", "layout": "dp=8", "tokens_per_step": 8192,
    "stages": [
      {"name": "forward", "compute_s": "100us"},
      {"name": "backward", "compute_s": "2ms",
       "collectives": [{"collective": "allreduce", "algorithm": "ring", "size": "64MiB", "groups": "dp"}]},
      {"name": "short", "compute_s": "500us",
       "collectives": [{"collective": "allreduce", "algorithm": "ring", "size": "64MiB", "groups": "dp"}]},
      {"name": "pipeline", "p2p": {"groups": "blocks:4", "size": "1MiB"}}]})",
      "overlap.json");
  CHECK(r["verified"] == true);
  const double p2p = 1e-6 + 1048576 / 100e9;  // chip 0 -> 1 -> 2 -> 3 at once: one hop pair each
  CHECK(r["stages"][1]["time_s"].get<double>() == Approx(2e-3).epsilon(1e-9));  // hidden
  CHECK(r["stages"][1]["exposed_comm_s"].get<double>() == Approx(0).margin(1e-12));
  CHECK(r["stages"][2]["time_s"].get<double>() == Approx(kAllreduce).epsilon(1e-9));  // the collective's
  CHECK(r["stages"][2]["exposed_comm_s"].get<double>() == Approx(kAllreduce - 500e-6).epsilon(1e-9));
  CHECK(r["stages"][3]["time_s"].get<double>() == Approx(p2p).epsilon(1e-9));
  const double step = 100e-6 + 2e-3 + kAllreduce + p2p;
  CHECK(r["step_time_s"].get<double>() == Approx(step).epsilon(1e-9));
  CHECK(r["model_s"].get<double>() == Approx(step).epsilon(1e-9));
  CHECK(r["compute_s"].get<double>() == Approx(2.6e-3).epsilon(1e-9));
  CHECK(r["exposed_comm_s"].get<double>() == Approx(step - 2.6e-3).epsilon(1e-9));
  CHECK(r["tokens_per_s"].get<double>() == Approx(8192 / step).epsilon(1e-9));
  // Energy: 8 chips x 1 kW and 1 switch x 100 W over the step, and 5 pJ/bit over the link bytes.
  CHECK(r["energy_j"].get<double>() ==
        Approx(8 * 1000 * step + 100 * step + 5e-12 * 8 * r["link_bytes"].get<double>()).epsilon(1e-9));
}

TEST_CASE("FLOPs become time at chip_flops x efficiency, and MFU is model FLOPs over peak") {
  json r = workload_json(R"({"workload": "training", "topology": "switch:4",
    "stages": [{"name": "work", "compute_flops": 1.5e12}], "set": {"chip_flops": "1e15", "compute_efficiency": "0.5"}})",
                         "flops.json");
  CHECK(r["step_time_s"].get<double>() == Approx(1.5e12 / 0.5e15).epsilon(1e-12));
  CHECK(r["model_flops"].get<double>() == 4 * 1.5e12);
  CHECK(r["mfu"].get<double>() == Approx(0.5).epsilon(1e-12));
  CHECK(r["exposed_comm_s"].get<double>() == Approx(0).margin(1e-15));
}

TEST_CASE("a step without FLOPs has no MFU: null in JSON, n/a in the table, never 0 %") {
  const std::string step = R"({"workload": "training", "topology": "switch:4",
    "stages": [{"name": "sync", "collectives": [{"collective": "allreduce", "algorithm": "ring", "size": "1MiB",
                                             "groups": "blocks:4"}]}]})";
  CHECK(workload_json(step, "noflops.json")["mfu"].is_null());
  const CliResult table = run_cli({"workload", temp_file("noflops_table.json", step)});
  CHECK(table.status == 0);
  CHECK_THAT(table.out, Catch::Contains("MFU             n/a (the step has no FLOPs)\n"));
}

TEST_CASE("the generated transformer step on trn3 runs verified, its tp stages as the groups alone") {
  CliResult r = run_cli({"workload",
                         std::string(ULTRASIM_SOURCE_DIR) + "/workloads/examples/training_trn3_tp4_dp36.json",
                         "--format", "json"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  json step = json::parse(r.out);
  CHECK(step["verified"] == true);
  CHECK(step["stages"].size() == 4 * 4 + 1);  // fwd, fwd tp, bwd, bwd tp per layer, then grads 0
  // "fwd 0 tp": two all-reduces of 4096 x 8192 x 2 bytes, one after the other, on 36 servers at once.
  json tp = run_json({"--topology", "trn3", "--collective", "allreduce", "--algorithm", "ring", "--size",
                      "64MiB", "--groups", "tp", "--layout", "tp=4"});
  // A training step's collectives pay the stack's step latency but no launch latency yet (the run does).
  const double launch = tp["stack"]["launch_latency_s"].get<double>();
  CHECK(launch == Approx(5e-6).epsilon(1e-12));
  CHECK(step["stages"][1]["time_s"].get<double>() ==
        Approx(2 * (tp["time_s"].get<double>() - launch)).epsilon(1e-9));
  // Forward compute per layer and chip: (2 T (4 H^2 + 3 H F) + 2 T S H) / tp at 2.517 PFLOP/s x 0.6.
  const double T = 4096, H = 8192, F = 28672;
  const double flops = (2 * T * (4 * H * H + 3 * H * F) + 2 * T * T * H) / 4;
  CHECK(step["stages"][0]["compute_s"].get<double>() == Approx(flops / (2.517e15 * 0.6)).epsilon(1e-12));
  // Model FLOPs: each layer's forward and twice it backward, on all 144 chips.
  CHECK(step["model_flops"].get<double>() == Approx(4 * 3 * flops * 144).epsilon(1e-12));
  CHECK(step["compute_s"].get<double>() == Approx(4 * 3 * flops / (2.517e15 * 0.6)).epsilon(1e-12));
  CHECK(step["mfu"].get<double>() ==
        Approx(step["model_flops"].get<double>() / (step["step_time_s"].get<double>() * 144 * 2.517e15))
            .epsilon(1e-12));
  CHECK(step["mfu"].get<double>() < 0.6);  // never above the efficiency the compute runs at
}

TEST_CASE("bad training files name the field") {
  auto error = [](const std::string& text, const std::string& fragment) {
    const std::string path = temp_path("bad-training.json");
    std::ofstream(path) << text;
    expect_input_error({"workload", path}, fragment);
  };
  error(R"({"workload": "training"})", "field 'stages' must be a non-empty array");
  error(R"({"workload": "training", "stages": [{"compute": 1}]})", "stages[0]: unknown field 'compute'");
  error(
      R"({"workload": "training", "topology": "switch:4", "stages": [{"collectives": [{"collective": "alltoallv",
        "size": "1MiB", "groups": "blocks:2"}]}]})",
      "alltoallv needs a matrix");
  error(
      R"({"workload": "training", "topology": "switch:4", "stages": [{"collectives": [{"collective": "allreduce",
        "size": "1MiB"}]}]})",
      "missing field 'groups'");
  error(
      R"({"workload": "training", "topology": "switch:4", "stages": [{"compute_s": "1ms", "compute_flops": 1}]})",
      "give compute_s or compute_flops, not both");
  error(
      R"({"workload": "training", "topology": "switch:4", "stages": [{"collectives": [{"collective": "allreduce",
        "size": "1MiB", "groups": "tp"}]}]})",
      "needs --layout");
}
