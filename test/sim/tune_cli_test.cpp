// `ultrasim tune` end to end on rows made from real `ultrasim run --format json` outputs
// (test/data/tune/README.md: made by ultrasim sweep): the table a library loads, the text a person reads, and
// bad input.
#include <catch2/catch.hpp>
#include <fstream>

#include "cli_runner.hpp"

using namespace ultrasim::test;

namespace {

const std::string kData = std::string(ULTRASIM_SOURCE_DIR) + "/test/data/tune/";

// The fastest verified algorithm of the rows at one size, read straight from the fixture.
std::string fastest_in_fixture(const std::string& file, std::uint64_t bytes) {
  std::ifstream in(kData + file);
  std::string line, best;
  double best_time = 0;
  while (std::getline(in, line)) {
    auto row = nlohmann::json::parse(line);
    if (row["status"] != "ok" || row["bytes"] != bytes || !row["verified"].get<bool>()) continue;
    if (best.empty() || row["time_s"].get<double>() < best_time) {
      best = row["algorithm"];
      best_time = row["time_s"];
    }
  }
  return best;
}

}  // namespace

TEST_CASE("tune on switch:8 all-reduce rows picks the fastest algorithm per size and merges ranges") {
  CliResult r = run_cli({"tune", "--from", kData + "switch8_allreduce.jsonl", "--format", "json"});
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  auto out = nlohmann::json::parse(r.out);
  CHECK(out["schema_version"] == 1);
  CHECK(out["command"] == "ultrasim tune --from " + kData + "switch8_allreduce.jsonl --format json");
  REQUIRE(out["tables"].size() == 1);
  const auto& table = out["tables"][0];
  CHECK(table["topology"] == "switch:8");
  CHECK(table["collective"] == "allreduce");
  CHECK(table["sets"] == nlohmann::json::object());
  const auto& ranges = table["ranges"];
  // One-shot (one step) at 1 KiB; two-shot (two steps, 2(p-1)/p of the buffer) from 64 KiB on.
  REQUIRE(ranges.size() == 2);
  CHECK(ranges[0]["algorithm"] == "one-shot");
  CHECK(ranges[0]["from_bytes"] == 1024);
  CHECK(ranges[0]["sampled_to_bytes"] == 1024);
  CHECK(ranges[0]["to_bytes"] == 65535);
  CHECK(ranges[0]["runner_up"] == "two-shot");
  CHECK(ranges[1]["algorithm"] == "two-shot");
  CHECK(ranges[1]["from_bytes"] == 65536);
  CHECK(ranges[1]["runner_up"] == "rabenseifner");
  CHECK(ranges[1]["to_bytes"] == 67108864);
  CHECK(fastest_in_fixture("switch8_allreduce.jsonl", 1024) == "one-shot");
  for (std::uint64_t bytes : {65536, 4194304, 67108864})
    CHECK(fastest_in_fixture("switch8_allreduce.jsonl", bytes) == "two-shot");
  CHECK(r.out == run_cli({"tune", "--from", kData + "switch8_allreduce.jsonl", "--format", "json"}).out);
}

TEST_CASE("tune reads several files: machine sets make their own table and error rows are skipped") {
  CliResult r = run_cli({"tune", "--from", kData + "switch8_allreduce.jsonl", "--from",
                         kData + "switch8_allreduce_50GBps.jsonl"});
  REQUIRE(r.status == 0);
  CHECK(r.out == read_file(kData + "switch8_allreduce.txt"));

  std::string path = temp_path("tune.json");
  CliResult to_file = run_cli({"tune", "--from", kData + "switch8_allreduce.jsonl", "--from",
                               kData + "switch8_allreduce_50GBps.jsonl", "--format", "json", "-o", path});
  REQUIRE(to_file.status == 0);
  CHECK(to_file.out.empty());
  auto out = nlohmann::json::parse(read_file(path));
  REQUIRE(out["tables"].size() == 2);
  CHECK(out["tables"][1]["sets"] == nlohmann::json{{"link_bandwidth", "50GBps"}});
  // The 50GBps file's switch-reduce rows are errors (no switch_reduction): never chosen, never runner-up.
  for (const auto& table : out["tables"])
    for (const auto& range : table["ranges"]) {
      CHECK(range["algorithm"] != "switch-reduce");
      CHECK(range["runner_up"] != "switch-reduce");
    }
}

TEST_CASE("tune's bad input is one line and exit status 2") {
  expect_input_error({"tune", "--from", kData + "missing.jsonl"}, "cannot read sweep rows");
  expect_input_error({"tune", "--from", kData + "malformed.jsonl"}, "malformed.jsonl:3: not JSON");
  expect_input_error({"tune", "--from", kData + "errors_only.jsonl"}, "no usable rows");
  expect_input_error({"tune", "--from", kData + "switch8_allreduce.jsonl", "--format", "csv"}, "format");
  expect_input_error({"tune"}, "--from is required");
}
