// The engine table and the fast engine: one row per engine feeds --engine, `list engines` and the
// reference; the fast engine stays within its stated error of the exact flow engine, says that it ran
// and what its error is, and auto picks it only where thousands of exchanges are simulated.
#include <catch2/catch.hpp>

#include <cmath>

#include "cli_runner.hpp"

using namespace ultrasim::test;

namespace {

// A random-router MoE layer on trn3-gen1 (64 chips): contended, its flows ending at many times.
std::vector<std::string> moe_layer(const std::string& engine, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"moe",  "--topology",        "trn3-gen1", "--experts", "64",   "--top-k",
                                "4",    "--tokens-per-chip", "64",        "--hidden",  "2048", "--ffn",
                                "1024", "--router",          "random",    "--seed",    "3",    "--engine",
                                engine, "--format",          "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("the engines are one table: each says what it computes, declines, its error and its memory") {
  const auto engines = cli_json({"list", "engines", "--format", "json"})["engines"];
  std::vector<std::string> names;
  for (const auto& e : engines) {
    names.push_back(e["name"]);
    CHECK(!e["description"].get<std::string>().empty());
    CHECK(!e["declines"].get<std::string>().empty());
    CHECK(!e["error"].get<std::string>().empty());
    CHECK(e["exact"] == (e["name"] != "fast" && e["name"] != "matrix"));
  }
  CHECK(names == std::vector<std::string>{"auto", "contention-free", "flow", "fast", "matrix", "simgrid"});
  CHECK(engines[2]["bytes_per_flow"] == 768);
  CHECK(engines[5]["bytes_per_flow"] == 2048);
}

TEST_CASE("the fast engine gives the flow engine's MoE layer within 0.5 % and says it ran, with its error") {
  const auto exact = cli_json(moe_layer("flow"));
  const auto fast = cli_json(moe_layer("fast"));
  CHECK(exact["engine"] == "flow");
  CHECK(!exact.contains("engine_error"));
  CHECK(fast["engine"] == "fast");
  CHECK(fast["engine_error"].get<std::string>().find("p99") != std::string::npos);
  const double t = exact["layer_time_s"], f = fast["layer_time_s"];
  CHECK(std::abs(f - t) / t < 0.005);
  CHECK(fast["verified"] == true);
  CHECK(fast["transfers"] == exact["transfers"]);  // the same program, the same messages
  // The same inputs, the same bytes out.
  CHECK(run_cli(moe_layer("fast")).out == run_cli(moe_layer("fast")).out);

  SECTION("--check-engine reports the difference of the layer's approximate engine (matrix), on the layer") {
    const double m = cli_json(moe_layer("matrix"))["layer_time_s"];
    const CliResult r = run_cli(moe_layer("flow", {"--check-engine", "1"}));
    REQUIRE(r.status == 0);
    const auto check = nlohmann::json::parse(r.out)["engine_check"];
    CHECK(check["exchanges"] == 1);
    CHECK(check["engine"] == "matrix");
    CHECK(check["worst"] == "the layer of batch 0");
    CHECK(check["worst_exact_s"].get<double>() == Approx(t).epsilon(1e-12));
    CHECK(check["worst_fast_s"].get<double>() == Approx(m).epsilon(1e-12));
    CHECK(check["max_rel_diff"].get<double>() == Approx(std::abs(m - t) / t).epsilon(1e-9));
    CHECK(r.err.find("ultrasim: engine check: matrix against flow on 1 exchange(s): largest difference") ==
          0);
  }
}

TEST_CASE("auto keeps a collective and one MoE layer exact and prices a tail of layers from their matrices") {
  CHECK(cli_json(moe_layer("auto"))["engine"] == "flow");
  const auto tail = cli_json(moe_layer("auto", {"--batches", "3"}));
  CHECK(tail["engine"] == "matrix");
  const auto exact_tail = cli_json(moe_layer("flow", {"--batches", "3"}));
  const auto fast_times = tail["batch_times_s"], exact_times = exact_tail["batch_times_s"];
  REQUIRE(fast_times.size() == exact_times.size());
  for (std::size_t i = 0; i < fast_times.size(); ++i)
    CHECK(std::abs(fast_times[i].get<double>() / exact_times[i].get<double>() - 1) < 0.005);
  // A contended collective: the flow engine, exact, under auto.
  const auto a2a = cli_json({"run", "--topology", "trn3-gen1", "--collective", "alltoall", "--algorithm",
                             "direct", "--size", "1MiB", "--format", "json", "--check-engine", "1"});
  CHECK(a2a["engine"] == "flow");
  CHECK(a2a["engine_check"]["max_rel_diff"].get<double>() < 0.005);
}

TEST_CASE("the fast engine declines in-switch reduction, naming itself, before anything is built") {
  expect_input_error(
      {"run", "--topology", "switch:8", "--collective", "allreduce", "--algorithm", "switch-reduce", "--size",
       "1MiB", "--set", "switch_reduction=true", "--engine", "fast"},
      "--engine fast cannot run switch-reduce: in-switch reduction is modelled by the SimGrid "
      "engine only; use auto or simgrid");
  // Under auto, SimGrid runs it.
  const CliResult r = run_cli({"run", "--topology", "switch:8", "--collective", "allreduce", "--algorithm",
                               "switch-reduce", "--size", "1MiB", "--set", "switch_reduction=true"});
  CHECK(r.status == 0);
  CHECK(nlohmann::json::parse(
            run_cli({"run", "--topology", "switch:8", "--collective", "allreduce", "--algorithm",
                     "switch-reduce", "--size", "1MiB", "--set", "switch_reduction=true", "--format", "json"})
                .out)["engine"] == "simgrid");
}

TEST_CASE(
    "the engine check on exchanges without contention says there was nothing to check, not a difference") {
  // A ring all-reduce on one switch: no two flows meet, auto runs it exactly on the contention-free engine.
  const CliResult r = run_cli({"run", "--topology", "switch:8", "--collective", "allreduce", "--algorithm",
                               "ring", "--size", "1MiB", "--check-engine", "1", "--format", "json"});
  REQUIRE(r.status == 0);
  const auto check = nlohmann::json::parse(r.out)["engine_check"];
  CHECK(check["exchanges"] == 1);
  CHECK(check["contended"] == 0);
  CHECK(check["max_rel_diff"].is_null());
  CHECK(check["worst"].is_null());
  CHECK(r.err ==
        "ultrasim: engine check: nothing to check: the 1 exchange(s) had no contention, and auto runs them "
        "exactly "
        "on the contention-free engine\n");
  // Where flows meet, the count says so.
  const auto contended = cli_json(moe_layer("flow", {"--check-engine", "1"}))["engine_check"];
  CHECK(contended["contended"] == 1);
}
