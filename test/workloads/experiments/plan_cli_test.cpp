// `ultrasim plan`: the cheapest deployment whose requests meet both SLOs, the runners-up with why each
// lost, a deployment that fails kept beside the others, SLOs nobody meets refused with the best reached,
// and the same answer from the search's sweep run in shards.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "cli_runner.hpp"
#include "workloads/experiments/plan.hpp"

using namespace ultrasim;
using namespace ultrasim::test;
using nlohmann::json;

namespace {

const std::vector<std::string> kSearch{
    "plan", "--model",         "llama3-70b", "--topology",  "trn2", "--tp",         "8,16", "--rate",
    "2",    "--num-requests",  "60",         "--input-len", "512",  "--output-len", "64",   "--slo-ttft",
    "1s",   "--prefill-share", "0.5",        "--format",    "json"};

}  // namespace

TEST_CASE("plan searches deployments as a sweep: a failing one is kept, shards give the same answer") {
  auto args = kSearch;
  args.insert(args.end(), {"--slo-tpot", "30ms"});
  const CliResult direct = run_cli(args);
  INFO(direct.err);
  REQUIRE(direct.status == 0);
  const json answer = json::parse(direct.out);
  CHECK(answer["deployments"] == 6);  // tp 8, 16 x continuous, chunked, disaggregated at half the chips
  CHECK(answer["failed"] == 1);       // tp 16 on the prefill pool's 8 chips
  CHECK(answer["runners_up"].back()["why"].get<std::string>().find("does not divide") != std::string::npos);
  // The same search as a sweep file, run in two shards, ranked from their rows.
  const std::string file = temp_path("plan.json"), a = temp_path("a.jsonl"), b = temp_path("b.jsonl");
  auto emit = kSearch;
  emit.insert(emit.end(), {"--slo-tpot", "30ms", "--emit-sweep", file});
  REQUIRE(run_cli(emit).status == 0);
  REQUIRE(run_cli({"sweep", "--file", file, "--shard", "0/2", "--out", a}).status == 0);
  REQUIRE(run_cli({"sweep", "--file", file, "--shard", "1/2", "--out", b}).status == 0);
  const CliResult ranked = run_cli({"plan", "--from", a, "--from", b, "--format", "json"});
  REQUIRE(ranked.status == 0);
  CHECK(json::parse(ranked.out) == answer);
}

TEST_CASE("plan refuses SLOs no deployment meets, saying the best reached") {
  auto args = kSearch;
  args.insert(args.end(), {"--slo-tpot", "1ms"});
  const CliResult r = run_cli(args);
  CHECK(r.status == 2);
  CHECK(r.err.find("no deployment meets") != std::string::npos);
  CHECK(r.err.find("the best reached 0.0 %") != std::string::npos);
  expect_input_error({"plan", "--rate", "1", "--slo-ttft", "1s"}, "give both SLOs");
  expect_input_error({"plan", "--slo-ttft", "1s", "--slo-tpot", "1s"}, "give the requests");
  expect_input_error(
      {"plan", "--rate", "1", "--slo-ttft", "1s", "--slo-tpot", "1s", "--scheduler", "fifo"},
      "plan: --scheduler: unknown scheduler 'fifo'; known: static, continuous, chunked, disaggregated");
}

TEST_CASE("plan --capacity sizes a fleet by each deployment's capacity, and refuses a target beyond it") {
  const std::vector<std::string> fleet{
      "plan",        "--capacity", "--model",      "llama3-70b", "--topology", "hgx-h100",
      "--tp",        "4,8",        "--scheduler",  "chunked",    "--rate",     "100",
      "--input-len", "512",        "--output-len", "64",         "--slo-ttft", "1s",
      "--slo-tpot",  "40ms",       "--max-batch",  "32",         "--format",   "json"};
  const CliResult r = run_cli(fleet);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json answer = json::parse(r.out);
  CHECK(answer["deployments"] == 2);
  // Each row's replicas cover the target, one fewer would not.
  for (const json& d : {answer["best"], answer["runners_up"][0]}) {
    const double capacity = d["capacity_request_rate"].get<double>(), replicas = d["replicas"].get<double>();
    CHECK(replicas * capacity >= 100);
    CHECK((replicas - 1) * capacity < 100);
    CHECK(d["fleet_chips"].get<double>() == replicas * 8);
  }
  CHECK(answer["best"]["fleet_cost_per_mtok_usd"].get<double>() <=
        answer["runners_up"][0]["fleet_cost_per_mtok_usd"].get<double>());
  // The same search with one replica at most cannot serve 100 requests/s.
  auto capped = fleet;
  capped.insert(capped.end(), {"--max-replicas", "1"});
  // (not a refusal up front: the capacities must be searched first, so not held to a refusal's 5 s)
  const CliResult refused = run_cli(capped);
  CHECK(refused.status == 2);
  CHECK(refused.out.empty());
  CHECK(refused.err.rfind(
            "ultrasim: error: plan: no fleet of at most 1 replicas serves 100 requests/s; the best "
            "reaches",
            0) == 0);
  CHECK(std::count(refused.err.begin(), refused.err.end(), '\n') == 1);
  auto counted = fleet;
  counted.insert(counted.end(), {"--num-requests", "50"});
  expect_input_error(counted, "--num-requests is for plan without --capacity");
}

TEST_CASE(
    "SIGTERM (Slurm's) on plan keeps the finished rows, says so, exits 143 and leaves no temporary files") {
  // Its own $TMPDIR, so that what it leaves there is its own.
  const std::string tmp = temp_path("plan-tmpdir"), out = temp_path("plan-term.jsonl"),
                    err = temp_path("plan-term.err");
  std::filesystem::create_directories(tmp);
  auto args = kSearch;
  args.insert(args.end(), {"--slo-tpot", "30ms", "--jobs", "1", "--out", out});
  const int pid = spawn_in_group(args, err, {"TMPDIR=" + tmp});
  for (int waited = 0; waited < 1200 && read_json_lines(out).empty(); ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(-pid, SIGTERM);  // the job step's processes, as Slurm signals them
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 143);
  const auto kept = read_json_lines(out);
  REQUIRE(!kept.empty());
  REQUIRE(kept.size() < 6);
  CHECK(read_file(err).rfind(
            "ultrasim: interrupted: " + std::to_string(kept.size()) + " of 6 points finished", 0) == 0);
  CHECK(std::filesystem::is_empty(tmp));  // neither the plan's grid cache nor the sweep's files remain
}

TEST_CASE("plan and sweep refuse a $TMPDIR that is no directory, naming it") {
  const std::string file = temp_file("not-a-dir", "x");
  setenv("TMPDIR", file.c_str(), 1);
  auto args = kSearch;
  args.insert(args.end(), {"--slo-tpot", "30ms"});
  const CliResult r = run_cli(args);
  const CliResult sweep = run_cli({"sweep", "--topology", "switch:4", "--collective", "allreduce",
                                   "--algorithm", "ring", "--sizes", "1MiB"});
  unsetenv("TMPDIR");
  const std::string said = "ultrasim: error: the temporary directory $TMPDIR '" + file +
                           "' is not a directory; set TMPDIR to one, or unset it for /tmp\n";
  CHECK(r.status == 2);
  CHECK(r.err == said);
  CHECK(sweep.status == 2);
  CHECK(sweep.err == said);
}

TEST_CASE("plan --from refuses what is not its rows, naming the file, the line and the field") {
  const std::string row =
      R"({"point":0,"status":"ok","inputs":{"topology":"trn2","tp":8},"good_fraction":1,"cost_per_mtok_usd":1.5,)"
      R"("request_goodput":2,"request_throughput":2,"p99_ttft_s":0.1,"p99_tpot_s":0.01,"chips":16,)"
      R"("slo_ttft_s":1,"slo_tpot_s":0.03})";
  const std::string good = temp_file("plan-row.jsonl", row + "\n");
  REQUIRE(run_cli({"plan", "--from", good}).status == 0);
  auto refused = [](const std::string& name, const std::string& text, const std::string& said) {
    const std::string file = temp_file(name, text);
    expect_input_error({"plan", "--from", file}, "rows file '" + file + "' line " + said);
  };
  // A request trace, a sweep file (what --emit-sweep writes), text: not JSON Lines of rows.
  const std::string not_rows = ": not JSON; --from reads the JSON Lines a plan's sweep wrote (--out ROWS)";
  refused("plan-trace.csv", "request,arrival_s,prompt_tokens,output_tokens\n0,0,512,64\n", "1" + not_rows);
  refused("plan-sweep.json", "{\n  \"base\": {}\n}\n", "1" + not_rows);
  refused("plan-text.jsonl", row + "\nhello\n", "2" + not_rows);
  refused("plan-object.jsonl", R"({"a": 1})", "1: not a sweep row");
  // A number the ranking reads, null or a string or negative.
  auto with = [&](const std::string& field, const std::string& value) {
    std::string text = row;
    const auto at = text.find("\"" + field + "\":") + field.size() + 3;
    return text.replace(at, text.find_first_of(",}", at) - at, value);
  };
  refused("plan-null.jsonl", with("cost_per_mtok_usd", "null"),
          "1, point 0: 'cost_per_mtok_usd' is null, not a number");
  refused("plan-string.jsonl", with("p99_ttft_s", "\"fast\""),
          "1, point 0: 'p99_ttft_s' is string, not a number");
  refused("plan-negative.jsonl", with("good_fraction", "-0.5"),
          "1, point 0: 'good_fraction' is -0.5, not a finite number >= 0");
}

TEST_CASE("'-' for an input file is said to be standard input, which these readers do not read") {
  const std::string said =
      ": standard input ('-') is not read here; give a file's path (from a pipe: /dev/stdin)";
  expect_input_error({"plan", "--from", "-"}, "rows file '-'" + said);
  expect_input_error({"run", "--topology", "switch:4", "--collective", "alltoallv", "--algorithm", "direct",
                      "--traffic-matrix", "-"},
                     said);
  expect_input_error({"serve", "--topology", "trn3@0-15", "--requests", "-"}, said);
  // `workload -` reads its file from standard input: there '-' is one.
}
