// `--engine matrix` as a user meets it: an MoE layer priced from its traffic matrices says so and carries
// its published error, agrees with the exact engine on the layer and its phases, is what auto runs for a
// tail of layers and what --check-engine checks there; anything else is refused up front, naming why.
#include <catch2/catch.hpp>

#include <cmath>

#include "cli_runner.hpp"

using namespace ultrasim::test;

namespace {

std::vector<std::string> layer(const std::string& engine, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{
      "moe",  "--topology", "trn3-gen1", "--experts",         "64",     "--top-k", "4", "--hidden",
      "2048", "--ffn",      "1024",      "--router",          "random", "--seed",  "3", "--engine",
      engine, "--format",   "json",      "--tokens-per-chip", "64"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("an MoE layer on the matrix engine: the exact layer and phases within 0.5 %, said and verified") {
  const auto exact = cli_json(layer("flow"));
  const auto matrix = cli_json(layer("matrix"));
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

TEST_CASE("the matrix engine refuses, before it runs, what is no chain of exchanges, naming why") {
  expect_input_error({"run", "--topology", "trn3", "--collective", "allreduce", "--algorithm", "ring",
                      "--size", "1MiB", "--engine", "matrix"},
                     "--engine matrix cannot run this: it prices exchanges of a traffic matrix (MoE layers, "
                     "direct all-to-all and all-to-allv), not allreduce ring; use auto, flow or fast");
  expect_input_error(layer("matrix", {"--micro-chunks", "2"}),
                     "--engine matrix cannot run this: a layer of 2 micro-chunks overlaps its phases; it "
                     "prices one chunk's dispatch, compute and combine only; use auto, flow or fast");
}

TEST_CASE(
    "a direct all-to-all and all-to-allv are one exchange: the matrix engine gives the flow engine's time") {
  auto time_of = [](std::vector<std::string> args, const std::string& engine) {
    args.insert(args.end(), {"--engine", engine, "--format", "json", "--no-link-stats"});
    const auto out = cli_json(args);
    CHECK(out["verified"] == true);
    CHECK(out["engine"] == engine);
    return out["time_s"].get<double>();
  };
  const std::vector<std::string> alltoall{"run",         "--topology", "clos:8x8", "--collective", "alltoall",
                                          "--algorithm", "direct",     "--size",   "32MiB"};
  CHECK(time_of(alltoall, "matrix") == Approx(time_of(alltoall, "flow")).epsilon(1e-9));
  // A skewed matrix: 16 chips, entries of 0-4 x 64 KiB drawn by a fixed pattern.
  std::string rows = "[";
  for (int s = 0; s < 16; ++s) {
    rows += s ? ",[" : "[";
    for (int d = 0; d < 16; ++d)
      rows += (d ? "," : "") + std::to_string(s == d ? 0 : ((s * 7 + d * 3) % 5) * 65536);
    rows += "]";
  }
  const std::string file = temp_file("matrix-engine-alltoallv.json", "{\"bytes\": " + rows + "]}");
  const std::vector<std::string> alltoallv{"run",          "--topology",       "switch:16",
                                           "--collective", "alltoallv",        "--algorithm",
                                           "direct",       "--traffic-matrix", file};
  CHECK(std::abs(time_of(alltoallv, "matrix") / time_of(alltoallv, "flow") - 1) < 0.005);
}

TEST_CASE("bad traffic matrices under --engine matrix: one line, exit 2, before anything runs") {
  auto with = [](const std::string& name, const std::string& text, const std::string& topology) {
    return std::vector<std::string>{
        "run",         "--topology", topology,           "--collective",        "alltoallv",
        "--algorithm", "direct",     "--traffic-matrix", temp_file(name, text), "--engine",
        "matrix"};
  };
  expect_input_error(with("matrix-neg.json", R"({"bytes": [[0, -5], [1, 0]]})", "switch:2"),
                     "row 0, column 1: -5 is negative; entries are byte counts >= 0");
  expect_input_error(with("matrix-nan.csv", "0,nan\n1,0\n", "switch:2"), "invalid size 'nan'");
  expect_input_error(with("matrix-inf.csv", "0,inf\n1,0\n", "switch:2"), "invalid size 'inf'");
  expect_input_error(with("matrix-size.json", R"({"bytes": [[0, 1], [1, 0]]})", "switch:4"),
                     "is 2 x 2 but topology 'switch:4' has 4 chips");
  // A collective the engine does not price, named: refused up front.
  expect_input_error(
      {"run", "--topology", "switch:4", "--collective", "alltoall", "--algorithm", "pairwise", "--size",
       "1MiB", "--engine", "matrix"},
      "--engine matrix cannot run this: it prices exchanges of a traffic matrix (MoE layers, direct "
      "all-to-all and all-to-allv), not alltoall pairwise; use auto, flow or fast");
}
