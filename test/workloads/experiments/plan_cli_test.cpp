// `ultrasim plan`: the cheapest deployment whose requests meet both SLOs, the runners-up with why each
// lost, a deployment that fails kept beside the others, SLOs nobody meets refused with the best reached,
// and the same answer from the search's sweep run in shards.
#include <catch2/catch.hpp>

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
