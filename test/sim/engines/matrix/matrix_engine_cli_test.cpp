// `--engine matrix` as a user meets it: an MoE layer priced from its traffic matrices says so and carries
// its published error, agrees with the exact engine on the layer and its phases, is what auto runs for a
// tail of layers and what --check-engine checks there; anything else is refused up front, naming why.
#include <catch2/catch.hpp>

#include <cmath>

#include "cli_runner.hpp"

using namespace ultrasim::test;

namespace {

std::vector<std::string> layer(const std::string& engine, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"moe",      "--topology", "trn3-gen1", "--experts", "64",     "--top-k",
                                "4",        "--hidden",   "2048",      "--ffn",     "1024",   "--router",
                                "random",   "--seed",     "3",         "--engine",  engine,   "--format",
                                "json",     "--tokens-per-chip", "64"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

nlohmann::json json_of(const std::vector<std::string>& args) {
  const CliResult r = run_cli(args);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("an MoE layer on the matrix engine: the exact layer and phases within 0.5 %, said and verified") {
  const auto exact = json_of(layer("flow"));
  const auto matrix = json_of(layer("matrix"));
  CHECK(matrix["engine"] == "matrix");
  CHECK(matrix["engine_error"].get<std::string>().find("p99") != std::string::npos);
  CHECK(matrix["verified"] == true);
  CHECK(matrix["transfers"] == exact["transfers"]);
  CHECK(matrix["dispatch_bytes"] == exact["dispatch_bytes"]);
  CHECK(matrix["link_bytes"] == exact["link_bytes"]);  // the records carry every byte on its path
  for (const char* field : {"layer_time_s", "dispatch_s", "combine_s"}) {
    CAPTURE(field);
    const double t = exact[field], m = matrix[field];
    CHECK(std::abs(m - t) / t < 0.005);
  }
  CHECK(run_cli(layer("matrix")).out == run_cli(layer("matrix")).out);  // deterministic
}

TEST_CASE("a tail of layers: auto prices it on the matrix engine, and --check-engine checks that engine") {
  const CliResult r = run_cli(layer("auto", {"--batches", "2", "--check-engine", "1"}));
  REQUIRE(r.status == 0);
  const auto out = nlohmann::json::parse(r.out);
  CHECK(out["engine"] == "matrix");
  CHECK(out["engine_check"]["engine"] == "matrix");
  CHECK(out["engine_check"]["max_rel_diff"].get<double>() < 0.005);
  CHECK(r.err.find("ultrasim: engine check: matrix against flow on 1 exchange(s)") == 0);
}

TEST_CASE("--engine matrix on what is no chain of exchanges is refused before it runs, naming why") {
  expect_input_error({"run", "--topology", "trn3", "--collective", "allreduce", "--algorithm", "ring",
                      "--size", "1MiB", "--engine", "matrix"},
                     "--engine matrix cannot run this: it runs only chains of all-to-allv exchanges (MoE "
                     "layers), not this program; use auto, flow or fast");
  expect_input_error(layer("matrix", {"--micro-chunks", "2"}),
                     "--engine matrix cannot run this: a layer of 2 micro-chunks overlaps its phases; it "
                     "prices one chunk's dispatch, compute and combine only; use auto, flow or fast");
}
