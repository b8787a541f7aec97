// --engine flow: max-min sharing without SimGrid gives SimGrid's times where flows contend, on small
// fabrics (<= 64 chips, <= 4 MiB; the trn3-scale comparisons are scripts/bench's).
#include <catch2/catch.hpp>

#include "cli_runner.hpp"

using namespace ultrasim::test;

namespace {

struct FlowCase {
  std::string topology, collective, algorithm, size;
  std::vector<std::string> extra;
};

nlohmann::json run_with(const FlowCase& c, const std::string& engine) {
  std::vector<std::string> args{"run",        "--topology",  c.topology,  "--collective",
                                c.collective, "--algorithm", c.algorithm, "--engine",
                                engine,       "--format",    "json"};
  if (!c.size.empty()) args.insert(args.end(), {"--size", c.size});
  args.insert(args.end(), c.extra.begin(), c.extra.end());
  CliResult r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("where flows contend, the flow engine gives SimGrid's times to 1e-9") {
  const std::vector<FlowCase> cases{
      {"switch:6", "alltoall", "direct", "6MB", {}},  // six flows leave each chip at once
      {"switch:16", "alltoall", "direct", "1048579", {}},
      {"torus:4x4", "alltoall", "direct", "4MiB", {}},
      {"torus:4x4", "allreduce", "ring", "4MiB", {}},
      {"clos:4x8", "alltoall", "direct", "1MiB", {}},
      {"clos:4x8", "allreduce", "recursive-doubling", "1MiB", {}},
      {"hgx-h100", "alltoall", "bruck", "4MiB", {}},
      {"switch:8", "alltoall", "pairwise", "1000003", {"--set", "planes=3", "--set", "multipath=stripe"}},
      {"torus:4x4", "allgather", "ring", "1MiB", {"--fault", "late-chip:3@2us", "--fault", "slow-chip:5=2"}},
      {"switch:16",
       "alltoallv",
       "direct",
       "",
       {"--traffic-matrix",
        std::string(ULTRASIM_SOURCE_DIR) + "/workloads/examples/moe_hot_experts_16.json"}},
  };
  for (const FlowCase& c : cases) {
    INFO(c.topology << " " << c.collective << " " << c.algorithm << " " << c.size);
    auto flow = run_with(c, "flow"), simgrid = run_with(c, "simgrid");
    CHECK(flow["engine"] == "flow");
    CHECK(flow["verified"] == true);
    CHECK(flow["time_s"].get<double>() == Approx(simgrid["time_s"].get<double>()).epsilon(1e-9));
    for (const char* field : {"model_s", "bound_s", "transfers", "bytes_sent"})
      CHECK(flow[field] == simgrid[field]);
  }
}

TEST_CASE("the flow engine declines what it does not model yet, naming it") {
  expect_input_error({"run", "--topology", "torus:4x4", "--collective", "allreduce", "--algorithm", "ring",
                      "--size", "1MiB", "--engine", "flow", "--fault", "link-down:chip1-chip2@10us"},
                     "--engine flow cannot");
  expect_input_error(
      {"run", "--topology", "switch:8", "--collective", "allreduce", "--algorithm", "switch-reduce", "--size",
       "1MiB", "--set", "switch_reduction=true", "--engine", "flow"},
      "--engine flow cannot run switch-reduce: in-switch reduction is modelled by the SimGrid "
      "engine only; use auto or simgrid");
}

TEST_CASE("a random-router MoE layer and the all-to-allv of its routing: the flow engine gives SimGrid's") {
  // 64 chips, 64 experts, top-4, Zipf 1.2 popularity: a skewed dispatch whose flows end at many distinct
  // times (the case the flow engine is for). Every numeric field of the layer agrees to 1e-9.
  const std::vector<std::string> moe{"moe",  "--topology",        "trn3-gen1", "--experts", "64",   "--top-k",
                                     "4",    "--tokens-per-chip", "128",       "--hidden",  "2048", "--ffn",
                                     "1024", "--router",          "random",    "--zipf",    "1.2",  "--seed",
                                     "3",    "--format",          "json"};
  const std::string matrix = temp_path("flow-moe-matrix.json");
  auto run = [&](const std::string& engine, bool write_matrix) {
    auto args = moe;
    args.insert(args.end(), {"--engine", engine});
    if (write_matrix) args.insert(args.end(), {"--traffic-out", matrix});
    CliResult r = run_cli(args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out);
  };
  auto flow = run("flow", true), simgrid = run("simgrid", false);
  CHECK(flow["engine"] == "flow");
  CHECK(flow["verified"] == true);
  CHECK(flow["imbalance"].get<double>() > 10);  // skewed indeed: the busiest chip has > 10x the mean
  int fields = 0;
  for (const auto& [key, value] : simgrid.items()) {
    if (!value.is_number_float() || value.get<double>() == 0) continue;
    INFO(key);
    CHECK(flow[key].get<double>() == Approx(value.get<double>()).epsilon(1e-9));
    ++fields;
  }
  CHECK(fields >= 15);  // times, rates, energy, cost, bytes per link
  // The dispatch's traffic matrix as an all-to-allv, direct and pairwise.
  for (const char* algorithm : {"direct", "pairwise"}) {
    INFO(algorithm);
    FlowCase c{"trn3-gen1", "alltoallv", algorithm, "", {"--traffic-matrix", matrix}};
    auto f = run_with(c, "flow"), s = run_with(c, "simgrid");
    CHECK(f["engine"] == "flow");
    CHECK(f["verified"] == true);
    CHECK(f["time_s"].get<double>() == Approx(s["time_s"].get<double>()).epsilon(1e-9));
    CHECK(f["transfers"] == s["transfers"]);
  }
}
