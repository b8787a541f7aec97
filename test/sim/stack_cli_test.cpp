// Software stacks through the CLI: simulation = model still holds under every stack (the launch latency
// runs as each chip's first computation, the step latency on every transfer, the protocol's efficiency in
// the links), the results say which stack and protocol ran, `list stacks` shows the registry.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>

#include "cli_runner.hpp"

using namespace ultrasim::test;

TEST_CASE("simulation equals model on contention-free runs under every stack and protocol", "[stacks]") {
  for (const char* protocol : {"LL", "LL128", "Simple"})
    run_exact("switch:8", "allreduce", "ring", "1MiB", {"stack=nccl", std::string("protocol=") + protocol});
  auto h100 = run_exact("hgx-h100", "allreduce", "ring", "64MiB");  // its default stack, nccl
  CHECK(h100["stack"]["name"] == "nccl");
  CHECK(h100["stack"]["protocol"] == "Simple");
  auto trn3 = run_exact("trn3", "allreduce", "ring", "1MiB");  // neuron
  CHECK(trn3["stack"]["name"] == "neuron");
  // neuron adds its 5 us launch and 1.5 us to each of the ring's 2 x 143 steps, and nothing else.
  auto trn3_ideal = run_exact("trn3", "allreduce", "ring", "1MiB", {"stack=ideal"});
  CHECK(double(trn3["model_s"]) ==
        Approx(double(trn3_ideal["model_s"]) + 5e-6 + 286 * 1.5e-6).epsilon(1e-12));
  CHECK(double(trn3["bound_s"]) == double(trn3_ideal["bound_s"]));
  run_exact("switch:8", "alltoall", "direct", "64KiB", {"stack=neuron"});
  // Across scale-up domains: the ring's domain-crossing steps pay the network step latency.
  run_exact("cluster:2:switch:4", "allgather", "ring", "1MiB", {"stack=nccl", "protocol=LL128"});
}

TEST_CASE("the results name the stack and protocol, the table says what they add", "[stacks]") {
  auto j =
      run_json({"--topology", "hgx-h100", "--collective", "allreduce", "--algorithm", "auto", "--size", "8"});
  auto stack = j["stack"];
  CHECK(stack["launch_latency_s"].get<double>() == Approx(6.6e-6).epsilon(1e-12));  // "6.6us" x 1e-6
  stack.erase("launch_latency_s");
  CHECK(stack == nlohmann::json::parse(R"({"name": "nccl", "origin": "built-in", "protocol": "LL",
      "step_latency_s": 6e-07, "network_step_latency_s": 2.7e-06, "efficiency": 0.5,
      "channels": {"open": 1, "of": 24}})"));
  CHECK(j["parameters"]["stack"] == "auto");
  CHECK(j["auto_ranking"][0]["protocol"] == "LL");
  CliResult table = run_cli({"run", "--topology", "hgx-h100", "--collective", "allreduce", "--algorithm",
                             "ring", "--size", "4GiB", "--engine", "contention-free"});
  REQUIRE(table.status == 0);
  CHECK_THAT(table.out,
             Catch::Contains("# stack nccl, protocol Simple: launch 8.40 us, 3.40 us per transfer, "
                             "efficiency 1.00 (--stack ideal: the fabric alone)"));
  // --stack NAME is --set stack=NAME; ideal prints no stack line.
  CliResult ideal = run_cli({"run", "--topology", "hgx-h100", "--collective", "allreduce", "--algorithm",
                             "ring", "--size", "4GiB", "--stack", "ideal"});
  REQUIRE(ideal.status == 0);
  CHECK_THAT(ideal.out, !Catch::Contains("# stack"));
  CHECK(run_json({"--topology", "hgx-h100", "--collective", "allreduce", "--algorithm", "ring", "--size",
                  "4GiB", "--stack", "ideal"})["time_s"] ==
        run_json({"--topology", "hgx-h100", "--collective", "allreduce", "--algorithm", "ring", "--size",
                  "4GiB", "--set", "stack=ideal"})["time_s"]);
}

TEST_CASE("a stack file runs like a built-in, bad stacks are one-line errors", "[stacks]") {
  const std::string file = temp_path("two_us.json");
  std::ofstream(file) << R"({"name": "two-us", "description": "2 us per transfer",
    "protocols": [{"name": "p", "launch_latency": "0us", "step_latency": "2us",
                   "network_step_latency": "0us", "efficiency": 1, "source": "test"}]})";
  auto stacked = run_exact("switch:8", "allreduce", "ring", "1MiB", {"stack=" + file});
  auto plain = run_exact("switch:8", "allreduce", "ring", "1MiB", {"transfer_overhead=2us"});
  CHECK(double(stacked["time_s"]) == Approx(double(plain["time_s"])).epsilon(1e-12));
  CHECK(stacked["stack"]["name"] == "two-us");
  CHECK(stacked["stack"]["origin"] == file);
  expect_input_error({"run", "--topology", "switch:8", "--collective", "allreduce", "--algorithm", "ring",
                      "--size", "1KiB", "--stack", "ncl"},
                     "parameter stack: unknown value 'ncl'; did you mean 'nccl'?");
  // With protocol auto a named algorithm that cannot run says why, not that nothing can.
  expect_input_error({"run", "--topology", "hgx-h100", "--collective", "allreduce", "--algorithm", "ring-2d",
                      "--size", "1KiB"},
                     "ring-2d runs on a two-dimensional torus (torus:XxY), not on hgx-h100");
  expect_input_error({"run", "--topology", "switch:8", "--collective", "allreduce", "--algorithm", "ring",
                      "--size", "1KiB", "--stack", "/nonexistent/x.json"},
                     "cannot read stack file '/nonexistent/x.json'");
  const std::string xml = temp_path("switch8.xml");
  REQUIRE(run_cli({"topology", "switch:8", "--format", "simgrid-xml", "-o", xml}).status == 0);
  expect_input_error(
      {"run", "--topology", "switch:8", "--collective", "allreduce", "--algorithm", "ring", "--size", "1KiB",
       "--stack", "nccl", "--set", "protocol=LL", "--engine", "simgrid", "--platform", xml},
      "--platform holds the fabric's own links, but protocol LL of stack nccl changes them");
  CHECK(run_json({"--topology", "switch:8", "--collective", "allreduce", "--algorithm", "ring", "--size",
                  "1KiB", "--stack", "nccl", "--set", "protocol=Simple", "--engine", "simgrid", "--platform",
                  xml})["verified"] == true);
  expect_input_error({"run", "--topology", "switch:8", "--collective", "allreduce", "--algorithm", "ring",
                      "--size", "1KiB", "--stack", "nccl", "--set", "protocol=LL64"},
                     "unknown protocol of stack nccl 'LL64'; did you mean 'LL'?");
}

TEST_CASE("list stacks shows each stack's protocols and terms", "[stacks]") {
  CliResult text = run_cli({"list", "stacks"});
  REQUIRE(text.status == 0);
  CHECK_THAT(text.out, Catch::StartsWith("stacks:\n  ideal "));
  CHECK_THAT(text.out, Catch::Contains("[LL128: launch 14.0 us, step 1.9 us, efficiency 0.92]"));
  CliResult json = run_cli({"list", "stacks", "--format", "json"});
  REQUIRE(json.status == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["stacks"].size() == 3);
  CHECK(j["stacks"][1]["algorithms"]["allreduce"] ==
        nlohmann::json::parse(R"(["ring", "double-binary-tree", "nvls"])"));
}

TEST_CASE(
    "tune on hgx-h100 under nccl puts the ring/NVLS crossover where model_s puts it, and auto where NCCL "
    "does",
    "[stacks]") {
  // Simulated sweep of nccl's all-reduce algorithms, each at its best protocol, 8 B to 8 GiB x8.
  const std::string rows = temp_path("h100.jsonl");
  REQUIRE(run_cli({"sweep", "--topology", "hgx-h100", "--collective", "allreduce", "--algorithm",
                   "ring,double-binary-tree,nvls", "--sizes", "8:8GiB:x8", "--out", rows})
              .status == 0);
  CliResult tune = run_cli({"tune", "--from", rows, "--format", "json"});
  REQUIRE(tune.status == 0);
  const auto ranges = nlohmann::json::parse(tune.out)["tables"][0]["ranges"];
  REQUIRE(ranges.size() == 2);
  CHECK(ranges[0]["algorithm"] == "ring");
  // Simulated: ring (with LL) to 256 KiB sampled, NVLS from 2 MiB. Below 1 MiB LL opens one channel per
  // 32 KiB (of 24), so ring/LL is slower than NCCL's tuner predicts, but not slower than NVLS.
  CHECK(ranges[0]["sampled_to_bytes"] == 262144);
  CHECK(ranges[1]["algorithm"] == "nvls");
  CHECK(ranges[1]["from_bytes"] == 2097152);
  // Where the stack's model (model_s, channels included) crosses: at every sampled size the fastest run is
  // the one of lowest model_s.
  std::map<std::uint64_t, std::pair<double, std::string>> fastest, lowest;
  std::ifstream in(rows);
  for (std::string line; std::getline(in, line);) {
    const auto row = nlohmann::json::parse(line);
    const auto bytes = row["bytes"].get<std::uint64_t>();
    for (auto [best, key] : {std::pair{&fastest, "time_s"}, std::pair{&lowest, "model_s"}}) {
      const double t = row[key].get<double>();
      if (!best->count(bytes) || t < (*best)[bytes].first) (*best)[bytes] = {t, row["algorithm"]};
    }
  }
  REQUIRE(fastest.size() == 11);
  for (const auto& [bytes, best] : fastest) CHECK(best.second == lowest[bytes].second);
  // auto ranks as NCCL's tuner does, every channel open: ring/LL to 1 MiB, NVLS from 2 MiB, the choice
  // NCCL reports on 8 H100s: "8B~1MB: Ring LL, 2MB~16GB: NVLS Simple" (NVIDIA/nccl-tests#309).
  auto picked = [](const std::string& size) {
    auto j = run_json(
        {"--topology", "hgx-h100", "--collective", "allreduce", "--algorithm", "auto", "--size", size});
    return j["algorithm"].get<std::string>() + "/" + j["stack"]["protocol"].get<std::string>();
  };
  CHECK(picked("1048576") == "ring/LL");
  CHECK(picked("2097152") == "nvls/Simple");
}
