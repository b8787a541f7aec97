// `ultrasim serve --capacity`: on deployments priced on the fabric, a search with no SLO to break stops
// at the saturated throughput (vLLM's benchmark at request rate inf), the capacity does not move when the
// window doubles, the result's fields agree with each other, the same inputs give the same bytes, and bad
// input is one line.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

#include "cli_runner.hpp"

using namespace ultrasim::test;
using nlohmann::json;

namespace {

// Llama-3-70B on one HGX H100 (tp 8), and Qwen3-235B's experts over its 8 GPUs (tp 1): lognormal
// lengths around 512 and 64 tokens, at most 32 requests per group.
const std::vector<std::string> kDense{"--model", "llama3-70b", "--topology", "hgx-h100", "--tp", "8"};
const std::vector<std::string> kMoe{"--model", "qwen3-235b", "--topology", "hgx-h100", "--tp", "1"};
const std::vector<std::string> kShape{
    "--input-len",   "512",         "--output-len", "64",     "--length-dist",
    "lognormal:0.6", "--max-batch", "32",           "--seed", "3"};

std::vector<std::string> serve(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.begin(), "serve");
  args.insert(args.end(), kShape.begin(), kShape.end());
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Runs `ultrasim ARGS --format json`; fails the test unless it exits 0.
json result(std::vector<std::string> args) {
  args.insert(args.end(), {"--format", "json"});
  const CliResult r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

json capacity(const std::vector<std::string>& deployment, const std::vector<std::string>& more) {
  auto args = serve(deployment, more);
  args.push_back("--capacity");
  return result(args);
}

// Requests/s completed over the middle half of a run whose requests all arrive at once (6,000 of them),
// read from its per-request CSV.
double saturated_throughput(const std::vector<std::string>& deployment) {
  const std::string csv = temp_path("saturated.csv");
  result(serve(deployment, {"--rate", "1e6", "--num-requests", "6000", "--requests-out", csv}));
  std::istringstream in(read_file(csv));
  std::string line;
  std::getline(in, line);
  std::vector<double> finish;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    finish.push_back(std::stod(cells.at(5)));  // finish_s
  }
  std::sort(finish.begin(), finish.end());
  const std::size_t n = finish.size();
  return static_cast<double>(n / 2) / (finish[3 * n / 4] - finish[n / 4]);
}

}  // namespace

TEST_CASE("with SLOs no latency can break the capacity is the saturated throughput, dense and MoE") {
  for (const auto& deployment : {kDense, kMoe}) {
    const json r = capacity(deployment, {});
    const double saturated = saturated_throughput(deployment);
    INFO(deployment[1] << ": capacity " << r["capacity_request_rate"] << ", saturated " << saturated);
    CHECK(r["capacity_request_rate"].get<double>() == Approx(saturated).epsilon(0.03));
    CHECK(r["binding"] == "queue");
    CHECK(r["slo_ttft_s"].is_null());
  }
}

TEST_CASE("the capacity does not move when the measured window doubles") {
  const std::vector<std::string> slos{"--slo-ttft", "1s", "--slo-tpot", "40ms"};
  const json once = capacity(kMoe, slos);
  auto twice_args = slos;
  twice_args.insert(twice_args.end(), {"--window-requests", "4000"});
  const json twice = capacity(kMoe, twice_args);
  CHECK(once["window_requests"] == 2000);
  CHECK(twice["window_requests"] == 4000);
  INFO(once["capacity_request_rate"] << " and " << twice["capacity_request_rate"]);
  CHECK(twice["capacity_request_rate"].get<double>() ==
        Approx(once["capacity_request_rate"].get<double>()).epsilon(0.03));
  CHECK(once["binding"] == "tpot");
}

TEST_CASE("the capacity result's fields agree with each other and with its curve") {
  const std::string curve = temp_path("curve.csv");
  auto args = serve(
      kDense, {"--slo-ttft", "1s", "--slo-tpot", "40ms", "--capacity", "--curve", curve, "--format", "json"});
  const CliResult first = run_cli(args);
  REQUIRE(first.status == 0);
  const json r = json::parse(first.out);
  const double rate = r["capacity_request_rate"].get<double>();
  const int chips = r["chips"].get<int>();
  CHECK(r["capacity_request_rate_per_chip"].get<double>() == Approx(rate / chips).epsilon(1e-12));
  CHECK(r["capacity_output_throughput_per_chip"].get<double>() ==
        Approx(r["capacity_output_throughput"].get<double>() / chips).epsilon(1e-12));
  // The interval holds the capacity and the lowest failing rate, which is within the precision above it.
  const double failing = r["failing_request_rate"].get<double>();
  CHECK(r["capacity_request_rate_low"].get<double>() <= rate);
  CHECK(r["capacity_request_rate_high"].get<double>() >= failing);
  CHECK(failing / rate - 1 <= r["capacity_precision"].get<double>() + 1e-12);
  // Every trial is in the curve, by rate; the capacity meets, every rate above it tried fails.
  const json& c = r["curve"];
  CHECK(c.size() == r["trials"].get<std::size_t>());
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (i > 0) CHECK(c[i]["request_rate"].get<double>() > c[i - 1]["request_rate"].get<double>());
    const double at = c[i]["request_rate"].get<double>();
    if (at == rate) CHECK(c[i]["meets"].get<bool>());
    if (at > rate) CHECK_FALSE(c[i]["meets"].get<bool>());
  }
  // Cost at capacity: the chips' price per second (the h100 profile's 32 USD per hour for 8 GPUs) over
  // the output tokens per second.
  CHECK(r["cost_per_mtok_usd"].get<double>() ==
        Approx(32.0 / 3600 / r["capacity_output_throughput"].get<double>() * 1e6).epsilon(1e-9));
  CHECK(r["energy_per_token_j"].get<double>() >= r["energy_per_token_chips_j"].get<double>());
  // The CSV: a header and a row per trial, the same rates.
  std::istringstream in(read_file(curve));
  std::string line;
  std::size_t rows = 0;
  std::getline(in, line);
  CHECK(line.rfind("request_rate,attainment,", 0) == 0);
  while (std::getline(in, line)) ++rows;
  CHECK(rows == c.size());
  // Same inputs, same bytes.
  CHECK(run_cli(args).out == first.out);
}

TEST_CASE("the capacity search refuses bad input in one line") {
  auto refused = [](const std::vector<std::string>& more, const std::string& what) {
    auto args = serve(kDense, more);
    expect_input_error(args, what);
  };
  refused({"--capacity", "--slo-ttft", "1ms"}, "--slo-ttft 1.000 ms is below the unloaded TTFT of");
  refused({"--capacity", "--slo-tpot", "1ms"}, "is below the unloaded TPOT of");
  refused({"--capacity", "--attainment", "0"}, "--attainment");
  refused({"--capacity", "--attainment", "1.5"}, "--attainment");
  refused({"--capacity", "--capacity-precision", "0"}, "--capacity-precision");
  refused({"--capacity", "--capacity-precision", "-0.1"}, "--capacity-precision");
  refused({"--capacity", "--attainment-of", "all"}, "--attainment-of");
  refused({"--capacity", "--rate", "5"}, "exclusive");
  refused({"--capacity", "--num-requests", "50"}, "exclusive");
  refused({"--capacity", "--window-requests", "10"}, "--window-requests");
  refused({"--capacity", "--timeline", temp_path("t.csv")}, "not the capacity search");
  refused({"--rate", "5", "--curve", temp_path("c.csv")}, "--curve is the capacity search's");
}
