// `ultrasim moe` and `ultrasim workload`: the MoE layer on the fabric. Its dispatch is all-to-all's when
// the routing is, its time is dispatch + the slowest chip's roofline + combine where the all-to-alls are
// exact, skew and pipelining move it the way they must, and the economics are their formulas.
#include <catch2/catch.hpp>

#include <fstream>

#include "cli_runner.hpp"

using namespace ultrasim::test;
using nlohmann::json;

namespace {

json moe_json(std::vector<std::string> args) {
  args.insert(args.begin(), "moe");
  args.insert(args.end(), {"--format", "json"});
  CliResult r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

const std::vector<std::string> kSwitch8{"--topology", "switch:8",          "--experts", "16",       "--top-k",
                                        "2",          "--tokens-per-chip", "1024",      "--hidden", "512"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

TEST_CASE("uniform routing dispatches exactly an all-to-all: same matrix, same time") {
  const std::string matrix = temp_path("moe-dispatch.json");
  json moe = moe_json(with(kSwitch8, {"--no-dedup", "--traffic-out", matrix}));
  CHECK(moe["verified"] == true);
  // N k H float8 bytes per chip = 1 MiB: the all-to-all of that size.
  json a2a = run_json(
      {"--topology", "switch:8", "--collective", "alltoall", "--algorithm", "direct", "--size", "1MiB"});
  CHECK(moe["dispatch_s"].get<double>() == Approx(a2a["time_s"].get<double>()).epsilon(1e-9));
  CHECK(moe["busiest_dispatch_bytes"] == 1048576);
  json v = run_json({"--topology", "switch:8", "--collective", "alltoallv", "--algorithm", "direct",
                     "--traffic-matrix", matrix});
  CHECK(v["time_s"].get<double>() == Approx(a2a["time_s"].get<double>()).epsilon(1e-12));
  // Every chip alike: the layer is dispatch + experts + combine (bfloat16: twice the bytes) exactly.
  const double alpha = 1e-6, beta = 100e9;  // two links of 0.5 us; 100 GB/s
  const double dispatch = alpha + 7 * 131072 / beta, combine = alpha + 7 * 262144 / beta;
  CHECK(moe["layer_time_s"].get<double>() ==
        Approx(dispatch + moe["expert_s"].get<double>() + combine).epsilon(1e-9));
  CHECK(moe["model_s"].get<double>() == Approx(moe["layer_time_s"].get<double>()).epsilon(1e-9));
  CHECK(moe["imbalance"].get<double>() == 1);
  CHECK(moe["dropped_tokens"] == 0);
}

TEST_CASE("Zipf skew raises the busiest chip's bytes and the layer time monotonically with s") {
  double time = 0;
  std::uint64_t bytes = 0;
  for (const char* s : {"0", "0.5", "1", "1.5"}) {
    INFO("zipf " << s);
    json r = moe_json(with(kSwitch8, {"--zipf", s}));
    CHECK(r["verified"] == true);
    CHECK(r["layer_time_s"].get<double>() > time);
    CHECK(r["busiest_dispatch_bytes"].get<std::uint64_t>() > bytes);
    CHECK(r["busiest_chip"] == 0);  // the hottest experts are the lowest numbered, on chip 0
    time = r["layer_time_s"];
    bytes = r["busiest_dispatch_bytes"];
  }
}

TEST_CASE("a capacity factor drops exactly the copies over capacity, and the layer gets faster") {
  const std::string load = temp_path("moe-load.csv");
  std::ofstream(load) << "4,2,1,1\n";
  const std::vector<std::string> base{"--topology", "switch:4", "--experts",         "4",
                                      "--top-k",    "1",        "--tokens-per-chip", "8",
                                      "--hidden",   "4096",     "--expert-load",     load};
  json unlimited = moe_json(base), capped = moe_json(with(base, {"--capacity-factor", "1"}));
  CHECK(unlimited["dropped_tokens"] == 0);
  CHECK(capped["dropped_tokens"] == 8);  // expert 0 wanted 16, takes ceil(1 x 32 / 4) = 8
  CHECK(capped["capacity_tokens"] == 8);
  CHECK(capped["dropped_fraction"].get<double>() == 0.25);
  CHECK(capped["layer_time_s"].get<double>() < unlimited["layer_time_s"].get<double>());
  CHECK(unlimited["imbalance"].get<double>() == 2);  // 16 of 32 copies on chip 0: twice the mean
}

TEST_CASE("replicas of the hottest experts relieve the chip that holds them") {
  json plain = moe_json(with(kSwitch8, {"--zipf", "1.5"}));
  json replicated = moe_json(with(kSwitch8, {"--zipf", "1.5", "--replicate-hot", "4", "--replicas", "3"}));
  CHECK(replicated["verified"] == true);
  CHECK(replicated["imbalance"].get<double>() < plain["imbalance"].get<double>());
  CHECK(replicated["layer_time_s"].get<double>() < plain["layer_time_s"].get<double>());
  CHECK(replicated["replicas"] == 3);
}

TEST_CASE("the straggler's expert time is its roofline on both sides of the ridge") {
  const double peak = 2.517e15 * 0.6, hbm = 4.9e12, weights = 3.0 * 2048 * 1024;  // H 2048, F 1024, float8
  for (const char* tokens : {"4", "65536"}) {
    INFO(tokens << " tokens per chip");
    json r = moe_json({"--topology", "switch:4", "--experts", "4", "--top-k", "1", "--tokens-per-chip",
                       tokens, "--hidden", "2048", "--ffn", "1024"});
    const double copies = std::stod(tokens);  // each chip's one expert gets N / 4 copies from each of 4 chips
    const double flops = 6 * 2048.0 * 1024 * copies, bytes = weights + 2048.0 * 3 * copies;
    CHECK(r["straggler_flops"].get<double>() == flops);
    CHECK(r["straggler_hbm_bytes"].get<double>() == bytes);
    CHECK(r["expert_s"].get<double>() == Approx(std::max(flops / peak, bytes / hbm)).epsilon(1e-12));
    CHECK(r["straggler_bound"] == (copies < 100 ? "memory" : "compute"));
  }
}

TEST_CASE("energy, tokens per joule and cost per million tokens are their formulas") {
  json r = moe_json(with(kSwitch8, {"--set", "chip_power=700", "--set", "switch_power=40", "--set",
                                    "link_energy=3", "--set", "ultraserver_price_per_hour=144"}));
  const double t = r["layer_time_s"], tokens = 8 * 1024;
  const double energy = 8 * 700 * t + 1 * 40 * t + 3e-12 * 8 * r["link_bytes"].get<double>();
  CHECK(r["energy_j"].get<double>() == Approx(energy).epsilon(1e-12));
  CHECK(r["tokens_per_j"].get<double>() == Approx(tokens / energy).epsilon(1e-12));
  CHECK(r["tokens_per_s"].get<double>() == Approx(tokens / t).epsilon(1e-12));
  // 144 USD/h for 144 chips: 1 USD per chip-hour.
  CHECK(r["cost_per_mtok_usd"].get<double>() == Approx(8 * t / 3600 / tokens * 1e6).epsilon(1e-12));
  // Every flow crosses two links (chip -> switch -> chip): link bytes are twice the fabric's bytes.
  CHECK(r["link_bytes"].get<double>() ==
        2 * (r["dispatch_bytes"].get<double>() + r["combine_bytes"].get<double>()));
}

TEST_CASE("random routing over batches reports the tail, the same for the same seed") {
  auto args = with(kSwitch8, {"--router", "random", "--zipf", "1", "--batches", "5"});
  json a = moe_json(args), b = moe_json(args), other = moe_json(with(args, {"--seed", "7"}));
  CHECK(a["batch_times_s"].size() == 5);
  CHECK(a["batch_times_s"] == b["batch_times_s"]);
  CHECK(a["batch_times_s"] != other["batch_times_s"]);
  CHECK(a["layer_time_p50_s"].get<double>() <= a["layer_time_p99_s"].get<double>());
  CHECK(a["layer_time_p99_s"] == a["layer_time_max_s"]);  // nearest rank: the 5th of 5
  CHECK(a["batch_times_s"][0] == a["layer_time_s"]);
}

TEST_CASE("micro-chunks overlap compute with communication") {
  // Compute-heavy experts (large F): pipelining hides most of dispatch and combine behind them.
  auto heavy = with(kSwitch8, {"--ffn", "65536"});
  json one = moe_json(heavy), four = moe_json(with(heavy, {"--micro-chunks", "4"}));
  CHECK(four["verified"] == true);
  CHECK(four["layer_time_s"].get<double>() < one["layer_time_s"].get<double>());
  CHECK(four["transfers"].get<int>() == 4 * one["transfers"].get<int>());
}

TEST_CASE("workload files run the same layer as the command line, and bad ones are named") {
  const std::string file = temp_path("moe-workload.json");
  std::ofstream(file) << R"({"workload": "moe", "topology": "switch:8", "experts": 16, "top_k": 2,
                            "tokens_per_chip": 1024, "hidden": 512, "zipf": 1})";
  CliResult r = run_cli({"workload", file, "--format", "json"});
  REQUIRE(r.status == 0);
  json w = json::parse(r.out);
  json c = moe_json(with(kSwitch8, {"--zipf", "1"}));
  CHECK(w["layer_time_s"] == c["layer_time_s"]);
  for (const char* example : {"moe_trn3_256e_top8.json"}) {
    CliResult ex = run_cli({"workload", std::string(ULTRASIM_SOURCE_DIR) + "/workloads/examples/" + example,
                            "--format", "json"});
    INFO(ex.err);
    REQUIRE(ex.status == 0);
    CHECK(json::parse(ex.out)["verified"] == true);
  }
  std::ofstream(file)
      << R"({"workload": "moe", "experts": 16, "top_k": 2, "tokens_per_chip": 0, "hidden": 512})";
  expect_input_error({"workload", file},
                     "field 'tokens_per_chip' must be an integer between 1 and 1073741824");
  std::ofstream(file) << R"({"workload": "inference"})";
  expect_input_error({"workload", file}, "unknown workload 'inference'; known: collective, moe, training");
  std::ofstream(file) << R"({"workload": "moee"})";
  expect_input_error({"workload", file}, "unknown workload 'moee'; did you mean 'moe'?");
  std::ofstream(file) << R"({"experts": 16})";
  expect_input_error({"workload", file}, "field 'workload' must name the workload, one of: collective, moe");
  expect_input_error({"moe", "--experts", "4", "--top-k", "5", "--tokens-per-chip", "8", "--hidden", "64"},
                     "--top-k 5 must be between 1 and the experts (4)");
  expect_input_error(with(with({"moe"}, kSwitch8), {"--capacity-factor", "0"}),
                     "--capacity-factor must be a number > 0, or unlimited");
}
