// `ultrasim serve --requests FILE | --rate QPS`: requests arriving at a deployment. One request alone is
// today's static serve, step for step; the disaggregated KV transfer is the same transfer run alone;
// goodput counts the requests within both SLOs; the same inputs give the same bytes; bad input is one line.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "cli_runner.hpp"

using namespace ultrasim::test;
using nlohmann::json;

namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out(1);
  for (const char c : text) {
    if (c == sep)
      out.emplace_back();
    else
      out.back().push_back(c);
  }
  return out;
}

json arrivals(std::vector<std::string> args) {
  args.insert(args.begin(), "serve");
  args.insert(args.end(), {"--format", "json"});
  CliResult r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

double rel_diff(double a, double b) {
  return std::abs(a - b) / std::abs(b);
}

const std::vector<std::string> kLlama{"--model", "llama3-70b", "--topology", "trn2", "--tp", "16"};

std::vector<std::string> with_args(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("a trace of one request is today's static serve: its prefill, then its decode steps") {
  // Static serve prices decode at the mid-decode context input + output / 2; the request's decode steps
  // run at contexts input .. input + output - 2 (mean input + output / 2 - 1), and the step is linear in
  // the context at batch 1: its TPOT is static serve's at input - 1.
  const std::string trace = temp_file("one.csv", "arrival_time,prompt_tokens,output_tokens\n0.5,1024,64\n");
  for (const auto& deployment :
       {kLlama, std::vector<std::string>{"--topology", "trn3@0-15", "--exact-steps"}}) {
    const json one = arrivals(with_args(deployment, {"--requests", trace, "--scheduler", "static"}));
    std::vector<std::string> fixed;
    for (const auto& a : deployment)
      if (a != "--exact-steps") fixed.push_back(a);
    const json ttft = arrivals(with_args(fixed, {"--input-len", "1024", "--output-len", "64"}));
    const json tpot = arrivals(with_args(fixed, {"--input-len", "1023", "--output-len", "64"}));
    CHECK(rel_diff(one["mean_ttft_s"].get<double>(), ttft["ttft_s"].get<double>()) < 1e-9);
    CHECK(rel_diff(one["mean_tpot_s"].get<double>(), tpot["tpot_s"].get<double>()) < 1e-9);
    const double e2e = ttft["ttft_s"].get<double>() + 63 * tpot["tpot_s"].get<double>();
    CHECK(rel_diff(one["mean_e2el_s"].get<double>(), e2e) < 1e-9);
    CHECK(one["completed"] == 1);
    CHECK(one["duration_s"].get<double>() == one["mean_e2el_s"].get<double>());
  }
}

TEST_CASE("the disaggregated KV transfer takes what the same transfer takes alone") {
  // One request of 2,000 prompt tokens: its KV (2,000 x 1,152 B per layer x 61 layers) from chip 0, the
  // prefill pool's first group, to chip 48, the decode pool's. ultrasim run's all-to-allv of that one
  // entry is the same transfer, launched as a collective: its time less the stack's launch latency.
  const std::string trace = temp_file("kv.csv", "arrival_time,prompt_tokens,output_tokens\n0,2000,4\n");
  const json r = arrivals(
      {"--topology", "trn3", "--scheduler", "disaggregated", "--prefill-chips", "48", "--requests", trace});
  const double bytes = 2000.0 * 1152 * 61;
  CHECK(r["kv_transfer_bytes"].get<double>() == bytes);
  std::string rows = "{\"bytes\": [";
  for (int i = 0; i < 144; ++i) {
    rows += i ? ",[" : "[";
    for (int j = 0; j < 144; ++j) rows += (j ? "," : "") + std::string(i == 0 && j == 48 ? "140544000" : "0");
    rows += "]";
  }
  const std::string matrix = temp_file("kv.json", rows + "]}");
  CliResult run = run_cli({"run", "--topology", "trn3", "--collective", "alltoallv", "--algorithm", "direct",
                           "--traffic-matrix", matrix, "--format", "json"});
  REQUIRE(run.status == 0);
  const json alone = json::parse(run.out);
  const double expected = alone["time_s"].get<double>() - alone["stack"]["launch_latency_s"].get<double>();
  CHECK(rel_diff(r["mean_kv_transfer_s"].get<double>(), expected) < 1e-9);
  // TTFT is the prefill pool's; the second token waits for the transfer and a decode step.
  CHECK(r["mean_itl_s"].get<double>() > expected);
}

TEST_CASE("goodput counts the requests within both SLOs, per second of the run") {
  const auto base = with_args(kLlama, {"--rate", "4", "--num-requests", "40", "--input-len", "512",
                                       "--output-len", "32", "--length-dist", "uniform:0.5", "--seed", "3"});
  const json loose = arrivals(with_args(base, {"--slo-ttft", "100s", "--slo-tpot", "100s"}));
  CHECK(loose["good_fraction"] == 1.0);
  CHECK(loose["request_goodput"].get<double>() == loose["request_throughput"].get<double>());
  const double median = loose["median_tpot_s"].get<double>();
  const json tight =
      arrivals(with_args(base, {"--slo-ttft", "100s", "--slo-tpot", std::to_string(median) + "s"}));
  const double fraction = tight["good_fraction"].get<double>();
  CHECK(fraction >= 0.5);  // at the median TPOT, at least half are within it
  CHECK(fraction < 1.0);
  CHECK(rel_diff(tight["request_goodput"].get<double>(), fraction * 40 / tight["duration_s"].get<double>()) <
        1e-12);
  CHECK(loose["p99_tpot_s"].get<double>() >= loose["p90_tpot_s"].get<double>());
  CHECK(loose["p90_tpot_s"].get<double>() >= median);
}

TEST_CASE("request arrivals: same inputs, same bytes, the timeline and the trace are written") {
  const std::string timeline = temp_path("timeline.csv"), trace = temp_path("trace.json");
  const std::vector<std::string> args{"serve",
                                      "--topology",
                                      "trn3@0-15",
                                      "--rate",
                                      "8",
                                      "--num-requests",
                                      "60",
                                      "--scheduler",
                                      "chunked",
                                      "--token-budget",
                                      "512",
                                      "--length-dist",
                                      "lognormal:0.5",
                                      "--format",
                                      "json"};
  const std::string per_request = temp_path("requests.csv");
  const CliResult a = run_cli(with_args(
                      args, {"--timeline", timeline, "--trace", trace, "--requests-out", per_request})),
                  b = run_cli(args);
  REQUIRE(a.status == 0);
  json ja = json::parse(a.out), jb = json::parse(b.out);  // all but the command line, byte for byte
  ja.erase("command"), jb.erase("command");
  CHECK(ja.dump() == jb.dump());
  CHECK(run_cli(args).out == b.out);
  // Points shared through a grid cache: the same answer, whether the points were simulated or read.
  const std::string cache = temp_path("grid");
  std::filesystem::create_directory(cache);
  auto cached = with_args(args, {"--grid-cache", cache});
  const CliResult first = run_cli(cached), second = run_cli(cached);
  REQUIRE(first.status == 0);
  CHECK(!std::filesystem::is_empty(cache));
  json j1 = json::parse(first.out), j2 = json::parse(second.out);
  j1.erase("command"), j2.erase("command");
  CHECK(j1.dump() == jb.dump());
  CHECK(j2.dump() == jb.dump());
  std::ifstream t(timeline);
  std::string header, row;
  std::getline(t, header);
  CHECK(header == "pool,start_s,end_s,requests,prefill_tokens,decode_tokens,kv_blocks,kv_use,preempted");
  std::size_t rows = 0;
  while (std::getline(t, row)) ++rows;
  CHECK(rows == json::parse(a.out)["pools"][0]["iterations"].get<std::size_t>());
  // Every request's row; the median of their TTFTs is the result's (nearest rank).
  std::ifstream pr(per_request);
  std::getline(pr, header);
  CHECK(header ==
        "request,arrival_s,prompt_tokens,output_tokens,first_token_s,finish_s,ttft_s,tpot_s,e2el_s,"
        "preemptions,group");
  std::vector<double> ttft;
  while (std::getline(pr, row)) ttft.push_back(std::stod(split(row, ',')[6]));
  REQUIRE(ttft.size() == 60);
  std::sort(ttft.begin(), ttft.end());
  CHECK(rel_diff(ttft[29], ja["median_ttft_s"].get<double>()) < 1e-12);
  std::ifstream tr(trace);
  const json events = json::parse(tr)["traceEvents"];
  // The two processes' names, two slices per request, a slice and a counter per iteration.
  CHECK(events.size() == 2 + 2 * 60 + 2 * rows);
}

TEST_CASE("request arrivals refuse bad input in one line") {
  auto refused = [](std::vector<std::string> args, const std::string& what) {
    args.insert(args.begin(), "serve");
    const CliResult r = run_cli(args);
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find(what) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  };
  const std::string head = "arrival_time,prompt_tokens,output_tokens\n";
  refused({"--requests", temp_file("u.csv", head + "1,10,10\n0.5,10,10\n")}, "before the row above");
  refused({"--requests", temp_file("n.csv", head + "-1,10,10\n")}, "is negative");
  refused({"--requests", temp_file("z.csv", head + "0,0,10\n")}, "prompt tokens '0'");
  refused({"--requests", temp_file("x.csv", head + "0,ten,10\n")}, "prompt tokens 'ten'");
  refused({"--requests", temp_file("c.csv", "when,prompt_tokens,output_tokens\n0,1,1\n")},
          "no arrival column");
  refused({"--requests", temp_file("e.csv", "")}, "is empty");
  refused({"--rate", "0"}, "--rate");
  refused({"--rate", "nan"}, "--rate");
  refused({"--rate", "1", "--requests", temp_file("o.csv", head + "0,1,1\n")}, "exclusive");
  refused({"--rate", "1", "--scheduler", "continous"}, "did you mean 'continuous'");
  refused({"--rate", "1", "--scheduler", "disaggregated", "--prefill-chips", "1"},
          "the prefill pool's layout does not fit");
  refused({"--rate", "1", "--scheduler", "disaggregated"}, "needs --prefill-chips");
  refused({"--rate", "1", "--input-len", "100000", "--token-budget", "4096"}, "over the token budget");
  refused({"--rate", "1", "--pp", "2"}, "--pp with request arrivals");
}

TEST_CASE(
    "request arrivals refuse the options only static batches read, and static serve the arrivals' ones") {
  auto refused = [](std::vector<std::string> args, const std::string& message) {
    const CliResult r = run_cli(args);
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.err == "ultrasim: error: " + message + "\n");
  };
  // The issue's example: three options that arrivals would ignore; the first in the table is named.
  refused({"serve", "--rate", "2", "--batches", "5", "--phase", "decode", "--check-engine", "1"},
          "--phase is for static batches (without --rate or --requests): arrivals run both phases, as their "
          "scheduler orders them");
  refused({"serve", "--rate", "2", "--batches", "5"},
          "--batches is for static batches (without --rate or --requests): arrivals draw each request once; "
          "give more with --num-requests");
  refused({"serve", "--rate", "2", "--tpot-target", "50ms"},
          "--tpot-target is for static batches (without --rate or --requests): arrivals judge TPOT against "
          "--slo-tpot");
  refused({"serve", "--rate", "2", "--check-engine", "1"},
          "--check-engine is for static batches (without --rate or --requests): check the engine on static "
          "batches of the same deployment");
  refused({"serve", "--rate", "2", "--batch", "1"},
          "--batch is for static batches (without --rate or --requests): with arrivals, --max-batch");
  const std::string trace = temp_file("lens.csv", "arrival_time,prompt_tokens,output_tokens\n0,10,4\n");
  refused(
      {"serve", "--requests", trace, "--input-len", "100"},
      "--input-len is for generated requests: the request trace (--requests) gives each request's lengths");
  // The same in a workload file, naming the file and the field.
  const std::string file =
      temp_file("arrivals_phase.json", R"({"workload": "serving", "rate": 2, "phase": "decode"})");
  refused({"workload", file}, "workload file '" + file +
                                  "': field \"phase\" is for static batches (without --rate or --requests): "
                                  "arrivals run both phases, as their scheduler orders them");
  // And static serving refuses what only arrivals read.
  refused({"serve", "--max-batch", "8"}, "--max-batch is for request arrivals (--requests or --rate)");
  refused({"serve", "--timeline", "t.csv"},
          "--timeline and --requests-out are for request arrivals (--requests or --rate)");
}

TEST_CASE("request arrivals: chips draw each step's power while stepping and idle power between") {
  const auto run = with_args(kLlama, {"--rate",         "2",
                                      "--num-requests", "6",
                                      "--input-len",    "256",
                                      "--output-len",   "16",
                                      "--seed",         "3",
                                      "--set",          "switch_power=0",
                                      "--set",          "link_energy=0",
                                      "--set",          "host_power=0",
                                      "--set",          "hbm_power_share=1",
                                      "--set",          "wait_power_share=1"});
  // Busy at chip_power (500 W on trn2), idle at idle_power_share of it.
  const json r = arrivals(with_args(run, {"--set", "idle_power_share=0.25"}));
  const double duration = r["duration_s"].get<double>(), tokens = r["total_output_tokens"].get<double>();
  const double busy = r["pools"][0]["busy_fraction"].get<double>() * duration;
  REQUIRE(busy < 0.9 * duration);
  CHECK(r["energy_per_token_chips_j"].get<double>() ==
        Approx(16 * 500 * (busy + 0.25 * (duration - busy)) / tokens).epsilon(1e-9));
  // idle = busy: every chip at chip_power the whole run, as before.
  const json flat = arrivals(with_args(run, {"--set", "idle_power_share=1"}));
  CHECK(flat["energy_per_token_j"].get<double>() == Approx(16 * 500 * duration / tokens).epsilon(1e-12));
  CHECK(flat["chip_power_w"].get<double>() == Approx(500).epsilon(1e-12));
}

TEST_CASE(
    "the grid cache is made where it is missing, refused where it cannot be, and heals a damaged entry") {
  const std::vector<std::string> args{"serve",          "--topology", "trn3@0-15", "--rate", "8",
                                      "--num-requests", "40",         "--format",  "json"};
  const CliResult plain = run_cli(args);
  REQUIRE(plain.status == 0);
  json want = json::parse(plain.out);
  want.erase("command");
  auto same = [&](const CliResult& r) {
    INFO(r.err);
    REQUIRE(r.status == 0);
    json j = json::parse(r.out);
    j.erase("command");
    CHECK(j.dump() == want.dump());
  };
  // A directory that is not there yet, two levels deep: made, and filled.
  const std::string cache = temp_path("grid-new") + "/points";
  same(run_cli(with_args(args, {"--grid-cache", cache})));
  REQUIRE(std::filesystem::is_directory(cache));
  std::vector<std::filesystem::path> entries;
  for (const auto& e : std::filesystem::directory_iterator(cache)) entries.push_back(e.path());
  REQUIRE(!entries.empty());
  // A damaged entry (a number edited to -1, one torn): simulated again, said on stderr, rewritten.
  std::sort(entries.begin(), entries.end());
  std::string text = read_file(entries.front().string());
  const auto at = text.find("\"values\":[") + 10;
  text.replace(at, text.find(',', at) - at, "-1");
  { std::ofstream(entries.front()) << text; }
  if (entries.size() > 1) std::ofstream(entries.back()) << "{\"key\": ";
  const CliResult healed = run_cli(with_args(args, {"--grid-cache", cache}));
  same(healed);
  CHECK(healed.err.find(
            "ultrasim: [warning] grid cache: " + entries.front().string() +
            " is damaged (serving: a segment's numbers are malformed: number 1 is negative); its point "
            "is simulated again and the file rewritten") != std::string::npos);
  CHECK(read_file(entries.front().string()).find("\"values\":[-1") == std::string::npos);
  // Read back whole now: nothing said.
  const CliResult again = run_cli(with_args(args, {"--grid-cache", cache}));
  same(again);
  CHECK(again.err.empty());
  // A file where the directory should be: refused before any work.
  expect_input_error(with_args(args, {"--grid-cache", temp_file("grid-file", "x")}),
                     "' is not a directory and cannot be made one");
}
