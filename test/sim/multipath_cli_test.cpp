// Multi-path through the command line: striping over switch planes gives the sum of the planes'
// bandwidth, single and hash one link's; the closed form follows the policy; the XML carries the paths.
#include <catch2/catch.hpp>

#include <map>

#include "cli_runner.hpp"
#include "topology/routing.hpp"

using namespace ultrasim::test;

namespace {

// switch:8 on 4 planes of 50 GB/s links.
std::vector<std::string> planes_run(const std::string& collective, const std::string& algorithm,
                                    const std::string& size, const std::vector<std::string>& sets) {
  std::vector<std::string> args{"--topology",  "switch:8", "--collective", collective,
                                "--algorithm", algorithm,  "--size",       size,
                                "--set",       "planes=4", "--set",        "link_bandwidth=50GBps"};
  for (const auto& set : sets) args.insert(args.end(), {"--set", set});
  return args;
}

}  // namespace

TEST_CASE("ring all-reduce on 4 switch planes: busbw is 4 x 50 GB/s striped, 50 GB/s single or hashed",
          "[multipath]") {
  auto busbw = [](const std::string& policy) {
    auto j = run_json(planes_run("allreduce", "ring", "1GiB", {"link_latency=0", "multipath=" + policy}));
    CHECK(j["verified"] == true);
    CHECK(j["parameters"]["multipath"] == policy);
    return j["busbw_GBps"].get<double>();
  };
  CHECK(busbw("stripe") == Approx(200).epsilon(0.005));
  CHECK(busbw("auto") == Approx(200).epsilon(0.005));  // planes > 1 stripe by default
  CHECK(busbw("single") == Approx(50).epsilon(0.005));
  // The ring's neighbour pairs may hash onto one plane or several: one link's rate either way.
  CHECK(busbw("hash") == Approx(50).epsilon(0.005));
}

TEST_CASE("striped: the closed form equals the simulated time on switch planes", "[multipath]") {
  for (const char* size : {"1KiB", "1048579", "1GiB"}) {
    for (auto [collective, algorithm] :
         {std::pair{"allreduce", "ring"}, std::pair{"alltoall", "direct"}, std::pair{"allgather", "ring"}}) {
      auto j = run_json(planes_run(collective, algorithm, size, {"multipath=stripe"}));
      INFO(collective << " " << algorithm << " " << size << ": time " << j["time_s"] << " model "
                      << j["model_s"]);
      double time = j["time_s"], model = j["model_s"], bound = j["bound_s"];
      CHECK(j["verified"] == true);
      CHECK(std::abs(time - model) <= 1e-3 * model);
      CHECK(time >= bound * (1 - 1e-9));
    }
  }
}

TEST_CASE("hash: each message takes its pair's hashed plane, stripe: one sub-flow per plane, bytes once",
          "[multipath]") {
  std::string trace = temp_path("multipath-hash.json");
  auto hashed = run_json(planes_run("alltoall", "direct", "8000", {"multipath=hash", "link_latency=0"}));
  {
    auto args = planes_run("alltoall", "direct", "8000", {"multipath=hash"});
    args.insert(args.begin(), "run");
    args.insert(args.end(), {"--format", "json", "--trace", trace});
    REQUIRE(run_cli(args).status == 0);
    auto events = nlohmann::json::parse(read_file(trace))["traceEvents"];
    int transfers = 0;
    for (const auto& e : events)
      if (e.value("cat", "") == "transfer") {
        ++transfers;
        int src = e["args"]["src"], dst = e["args"]["dst"];
        CHECK(e["args"]["path"] == ultrasim::hashed_path(src, dst, 4));
      }
    CHECK(transfers == 8 * 7);
  }
  // Hashing collides: some plane carries more of a chip's 7 messages than an even spread would, so the
  // all-to-all is slower than striped, which is the injection bound exactly (no latency).
  auto striped = run_json(planes_run("alltoall", "direct", "8000", {"multipath=stripe", "link_latency=0"}));
  auto single = run_json(planes_run("alltoall", "direct", "8000", {"multipath=single", "link_latency=0"}));
  CHECK(striped["time_s"].get<double>() == Approx(7 * 1000 / 200e9).epsilon(1e-9));
  CHECK(single["time_s"].get<double>() == Approx(7 * 1000 / 50e9).epsilon(1e-9));
  CHECK(hashed["time_s"].get<double>() > striped["time_s"].get<double>());
  CHECK(hashed["time_s"].get<double>() < single["time_s"].get<double>());
  CHECK(hashed["time_s"].get<double>() == Approx(hashed["model_s"].get<double>()).epsilon(1e-3));
  CHECK(striped["bytes_sent"] == single["bytes_sent"]);
  CHECK(striped["transfers"] == single["transfers"]);

  std::string striped_trace = temp_path("multipath-stripe.json");
  auto args = planes_run("alltoall", "direct", "8003", {"multipath=stripe"});
  args.insert(args.begin(), "run");
  args.insert(args.end(), {"--format", "json", "--trace", striped_trace});
  REQUIRE(run_cli(args).status == 0);
  std::map<std::pair<int, int>, std::vector<std::pair<int, std::uint64_t>>>
      flows;  // (src, dst) -> (path, bytes)
  const auto striped_events = nlohmann::json::parse(read_file(striped_trace));
  for (const auto& e : striped_events["traceEvents"])
    if (e.value("cat", "") == "transfer")
      flows[{e["args"]["src"], e["args"]["dst"]}].emplace_back(e["args"]["path"], e["args"]["bytes"]);
  REQUIRE(flows.size() == 56);
  // chip0's message to chip1 is its second chunk of 8003 (1001 bytes: the first three chunks get one more).
  CHECK(flows[{0, 1}] == std::vector<std::pair<int, std::uint64_t>>{{0, 251}, {1, 250}, {2, 250}, {3, 250}});
}

TEST_CASE("the exported XML carries the path sets and gives the in-memory times", "[multipath]") {
  std::string xml = temp_path("planes.xml");
  CliResult exported = run_cli({"topology", "switch:8", "--set", "planes=4", "--set", "link_bandwidth=50GBps",
                                "--format", "simgrid-xml", "-o", xml});
  REQUIRE(exported.status == 0);
  CHECK(read_file(xml).find("<host id=\"chip7#3\"") != std::string::npos);
  for (const char* policy : {"multipath=stripe", "multipath=hash"}) {
    auto args = planes_run("alltoall", "direct", "3MiB", {policy});
    args.insert(args.end(), {"--engine", "simgrid"});  // SimGrid on both sides: the same to the last bit
    auto built = run_json(args);
    args.insert(args.end(), {"--platform", xml});
    auto loaded = run_json(args);
    INFO(policy);
    CHECK(loaded["time_s"] == built["time_s"]);
  }
  SECTION("a platform exported single cannot run striped") {
    std::string flat = temp_path("planes-single.xml");
    REQUIRE(run_cli({"topology", "switch:8", "--set", "planes=4", "--set", "multipath=single", "--format",
                     "simgrid-xml", "-o", flat})
                .status == 0);
    auto args = planes_run("allreduce", "ring", "1MiB", {"multipath=stripe"});
    args.insert(args.begin(), "run");
    args.insert(args.end(), {"--platform", flat});
    expect_input_error(args, "has no host chip1#1");
  }
}

TEST_CASE("an unknown multipath policy is bad input naming the choices, with a guess when close",
          "[multipath]") {
  auto args = planes_run("allreduce", "ring", "1MiB", {"multipath=bogus"});
  args.insert(args.begin(), "run");
  expect_input_error(args, "parameter multipath: unknown value 'bogus'; known: auto, single, stripe, hash");
  args = planes_run("allreduce", "ring", "1MiB", {"multipath=strip"});
  args.insert(args.begin(), "run");
  expect_input_error(args, "did you mean 'stripe'?");
}
