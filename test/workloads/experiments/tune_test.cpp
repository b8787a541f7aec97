// Tuning tables from sweep rows: the best verified row per size, ranges merged while the choice (algorithm
// and its own parameters) stays the same, tables kept apart by machine sets.
#include <catch2/catch.hpp>
#include <sstream>

#include "topology/base/errors.hpp"
#include "workloads/experiments/tune.hpp"

using namespace ultrasim;
using json = nlohmann::json;

namespace {

// A hand-made ok row on switch:8 all-reduce (the fields tune reads, plus the parameters a run reports).
json row(int point, const std::string& algorithm, std::uint64_t bytes, double time_s,
         json sets = json::object(), json algorithm_parameters = json::object()) {
  json parameters{{"link_bandwidth", 1e11}, {"link_latency", 5e-7}};
  parameters.update(algorithm_parameters);
  return {{"point", point},
          {"status", "ok"},
          {"topology", "switch:8"},
          {"collective", "allreduce"},
          {"requested_algorithm", algorithm},
          {"algorithm", algorithm},
          {"bytes", bytes},
          {"seed", 0},
          {"sets", sets},
          {"time_s", time_s},
          {"busbw_GBps", bytes / time_s / 1e9},
          {"verified", true},
          {"parameters", parameters}};
}

std::vector<SweepRow> read(const std::vector<json>& rows) {
  std::stringstream text;
  for (const auto& r : rows) text << r.dump() << "\n";
  return read_sweep_rows(text, "rows.jsonl");
}

std::vector<TuneTable> tables_of(const std::vector<json>& rows) {
  return build_tuning_tables(read(rows));
}

void check_input_error(const std::string& text, const std::string& fragment) {
  std::stringstream in(text);
  try {
    build_tuning_tables(read_sweep_rows(in, "rows.jsonl"));
    FAIL("expected an InputError containing: " << fragment);
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains(fragment));
  }
}

}  // namespace

TEST_CASE("each sampled size takes the fastest algorithm and equal neighbours merge into ranges that tile") {
  auto tables = tables_of({row(0, "one-shot", 1024, 2e-6), row(1, "one-shot", 4096, 3e-6),
                           row(2, "one-shot", 16384, 9e-6), row(3, "ring", 1024, 5e-6),
                           row(4, "ring", 4096, 6e-6), row(5, "ring", 16384, 8e-6)});
  REQUIRE(tables.size() == 1);
  CHECK(tables[0].topology == "switch:8");
  CHECK(tables[0].collective == "allreduce");
  CHECK(tables[0].sets == json::object());
  const auto& ranges = tables[0].ranges;
  REQUIRE(ranges.size() == 2);
  // one-shot measured at 1 KiB and 4 KiB; it holds until one byte before ring's first size.
  CHECK(ranges[0].algorithm == "one-shot");
  CHECK(ranges[0].from_bytes == 1024);
  CHECK(ranges[0].to_bytes == 16383);
  CHECK(ranges[0].sampled_to_bytes == 4096);
  CHECK(ranges[0].busbw_GBps.get<double>() == Approx(4096 / 3e-6 / 1e9).epsilon(1e-12));
  CHECK(ranges[0].runner_up == std::optional<std::string>("ring"));
  CHECK(*ranges[0].margin == Approx(2.0).epsilon(1e-12));  // 6 us / 3 us at 4 KiB
  CHECK(ranges[1].algorithm == "ring");
  CHECK(ranges[1].from_bytes == 16384);
  CHECK(ranges[1].to_bytes == 16384);  // the last range ends at the largest sampled size
  CHECK(*ranges[1].margin == Approx(9.0 / 8.0).epsilon(1e-12));
}

TEST_CASE("a tie goes to the earlier point, whatever order the rows were written in") {
  // Rows of a running sweep appear in completion order: point 7 was written first.
  auto tables = tables_of({row(7, "two-shot", 1024, 4e-6), row(2, "ring", 1024, 4e-6)});
  REQUIRE(tables[0].ranges.size() == 1);
  CHECK(tables[0].ranges[0].algorithm == "ring");
  CHECK(tables[0].ranges[0].runner_up == std::optional<std::string>("two-shot"));
  CHECK(*tables[0].ranges[0].margin == 1.0);
}

TEST_CASE("failed and unverified rows never win, a size with no usable row is skipped") {
  json unverified = row(1, "one-shot", 1024, 1e-9);
  unverified["verified"] = false;
  unverified["wrong"] = 3;
  json failed{{"point", 2},
              {"status", "error"},
              {"topology", "switch:8"},
              {"collective", "allreduce"},
              {"requested_algorithm", "one-shot"},
              {"bytes", 4096},
              {"seed", 0},
              {"sets", json::object()},
              {"error", "simulation failed"},
              {"exit_status", 3}};
  json only_failed = failed;
  only_failed["point"] = 3;
  only_failed["bytes"] = 16384;
  auto tables = tables_of({row(0, "ring", 1024, 5e-6), unverified, failed, row(4, "ring", 4096, 6e-6),
                           only_failed, row(5, "two-shot", 65536, 7e-6)});
  const auto& ranges = tables[0].ranges;
  REQUIRE(ranges.size() == 2);
  CHECK(ranges[0].algorithm == "ring");
  CHECK(ranges[0].runner_up == std::nullopt);  // the unverified one-shot is no runner-up either
  CHECK(ranges[0].margin == std::nullopt);
  CHECK(ranges[0].sampled_to_bytes == 4096);
  CHECK(ranges[0].to_bytes == 65535);  // 16 KiB had no usable row: ring's range runs over it
  CHECK(ranges[1].algorithm == "two-shot");
  CHECK(ranges[1].from_bytes == 65536);
}

TEST_CASE("machine sets keep tables apart, algorithm parameters in sets compete inside one table") {
  json slow{{"link_bandwidth", "50GBps"}, {"pipeline_chunks", "4"}};
  json fast{{"link_bandwidth", "100GBps"}, {"pipeline_chunks", "4"}};
  auto tables =
      tables_of({row(0, "ring", 1024, 9e-6, slow, {{"pipeline_chunks", 4}}),
                 row(1, "ring", 1024, 5e-6, fast, {{"pipeline_chunks", 4}}),
                 row(2, "ring", 1024, 8e-6, json{{"link_bandwidth", "50GBps"}, {"pipeline_chunks", "1"}},
                     {{"pipeline_chunks", 1}})});
  REQUIRE(tables.size() == 2);
  CHECK(tables[0].sets == json{{"link_bandwidth", "50GBps"}});  // first row's table first
  CHECK(tables[1].sets == json{{"link_bandwidth", "100GBps"}});
  // At 50 GBps, pipeline_chunks=1 (8 us) beats 4 (9 us): both were candidates of one table.
  REQUIRE(tables[0].ranges.size() == 1);
  CHECK(tables[0].ranges[0].parameters == json{{"pipeline_chunks", 1}});
  CHECK(tables[1].ranges[0].parameters == json{{"pipeline_chunks", 4}});
}

TEST_CASE("a change of the algorithm's own parameters starts a new range, other parameters are not listed") {
  auto tables = tables_of({row(0, "ring", 1024, 2e-6, json::object(), {{"pipeline_chunks", 1}}),
                           row(1, "ring", 4096, 3e-6, json::object(), {{"pipeline_chunks", 1}}),
                           row(2, "ring", 16384, 4e-6, json::object(), {{"pipeline_chunks", 8}}),
                           row(3, "one-shot", 16384, 5e-6)});
  const auto& ranges = tables[0].ranges;
  REQUIRE(ranges.size() == 2);
  CHECK(ranges[0].algorithm == "ring");
  CHECK(ranges[0].parameters == json{{"pipeline_chunks", 1}});  // not link_bandwidth: a machine parameter
  CHECK(ranges[0].to_bytes == 16383);
  CHECK(ranges[1].algorithm == "ring");
  CHECK(ranges[1].parameters == json{{"pipeline_chunks", 8}});
  CHECK(ranges[1].runner_up == std::optional<std::string>("one-shot"));
  // An algorithm without parameters of its own (one-shot) has none listed.
  auto one_shot = tables_of({row(0, "one-shot", 1024, 1e-6, json::object(), {{"pipeline_chunks", 8}})});
  CHECK(one_shot[0].ranges[0].parameters == json::object());
}

TEST_CASE("tables are JSON a library loads and text a person reads") {
  auto tables = tables_of({row(0, "one-shot", 1024, 2e-6), row(1, "ring", 1024, 5e-6),
                           row(2, "ring", 1048576, 2e-5, json::object(), {{"pipeline_chunks", 1}})});
  auto out = tuning_json(tables, "0.1.0", "ultrasim tune --from rows.jsonl");
  CHECK(out["schema_version"] == 1);
  CHECK(out["version"] == "0.1.0");
  CHECK(out["command"] == "ultrasim tune --from rows.jsonl");
  const auto& ranges = out["tables"][0]["ranges"];
  REQUIRE(ranges.size() == 2);
  CHECK(ranges[0]["from_bytes"] == 1024);
  CHECK(ranges[0]["to_bytes"] == 1048575);
  CHECK(ranges[0]["algorithm"] == "one-shot");
  CHECK(ranges[0]["margin"].get<double>() == Approx(2.5).epsilon(1e-12));
  CHECK(ranges[1]["runner_up"].is_null());
  CHECK(ranges[1]["margin"].is_null());
  CHECK(ranges[1]["parameters"] == nlohmann::ordered_json{{"pipeline_chunks", 1}});
  CHECK(tuning_text(tables) ==
        "switch:8 allreduce\n"
        "  sizes                    algorithm                        busbw GB/s  runner-up (time ratio)\n"
        "  [1 KiB, 1 MiB)           one-shot                               0.51  ring (2.50x)\n"
        "  [1 MiB, 1 MiB]           ring pipeline_chunks=1                52.43  -\n");
}

TEST_CASE("bad rows are input errors naming the line, no usable row is an error too") {
  check_input_error(row(0, "ring", 1024, 1e-6).dump() + "\n\n{\"point\": 1, \"status\": \"ok\",\n",
                    "rows.jsonl:3: not JSON");
  check_input_error("[1, 2]\n", "rows.jsonl:1: not a JSON object");
  check_input_error("{\"status\": \"ok\"}\n", "rows.jsonl:1: row has no \"point\"");
  json no_time = row(0, "ring", 1024, 1e-6);
  no_time.erase("time_s");
  check_input_error(no_time.dump() + "\n", "rows.jsonl:1: row has no \"time_s\"");
  json maybe = row(0, "ring", 1024, 1e-6);
  maybe["status"] = "maybe";
  check_input_error(maybe.dump() + "\n", "\"status\" is 'maybe', expected ok or error");
  check_input_error("", "no usable rows");
  check_input_error("{\"point\": 0, \"status\": \"error\", \"error\": \"x\", \"exit_status\": 2}\n",
                    "no usable rows: none has status ok and verified true (1 rows read)");
}
