// `ultrasim run --algorithm file:PATH` end to end: a schedule written as data is simulated, timed and
// verified exactly like the built-in algorithm it transcribes; a bad file is one line and exit status 2.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "cli_runner.hpp"

using namespace ultrasim::test;

namespace {

const std::string kExamples = std::string(ULTRASIM_SOURCE_DIR) + "/collectives/schedules/";

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Runs scripts/make_schedule.py and returns the path of what it wrote.
std::string generate(const std::string& algorithm, int p) {
  std::string path = temp_path(algorithm + "_" + std::to_string(p) + ".json");
  std::string command = "/usr/bin/python3 " + std::string(ULTRASIM_SOURCE_DIR) +
                        "/scripts/make_schedule.py " + algorithm + " " + std::to_string(p) + " -o " + path;
  REQUIRE(std::system(command.c_str()) == 0);
  return path;
}

std::vector<std::string> run_args(const std::string& topology, const std::string& collective,
                                  const std::string& algorithm, const std::string& size) {
  return {"--topology", topology, "--collective", collective, "--algorithm", algorithm, "--size", size};
}

// The file's run and the built-in's agree in time and model_s within 1e-9 relative, both verified.
void check_same_as_builtin(const std::string& topology, const std::string& collective,
                           const std::string& file, const std::string& builtin, const std::string& size) {
  auto data = run_json(run_args(topology, collective, "file:" + file, size));
  auto reference = run_json(run_args(topology, collective, builtin, size));
  INFO(topology << " " << collective << " " << size << ": file " << data["time_s"] << " / " << data["model_s"]
                << ", " << builtin << " " << reference["time_s"] << " / " << reference["model_s"]);
  CHECK(data["verified"] == true);
  CHECK(data["algorithm"] == "file:" + file);
  CHECK(data["requested_algorithm"] == "file:" + file);
  CHECK(data["time_s"].get<double>() == Approx(reference["time_s"].get<double>()).epsilon(1e-9));
  CHECK(data["model_s"].get<double>() == Approx(reference["model_s"].get<double>()).epsilon(1e-9));
  CHECK(data["transfers"] == reference["transfers"]);
}

// A bad schedule file: exit status 2, nothing on stdout, one line `ultrasim: error: <file>: <what>`.
void expect_bad_file(const std::string& file, const std::string& what,
                     const std::string& topology = "switch:4", const std::string& collective = "allreduce") {
  CliResult r = run_cli({"run", "--topology", topology, "--collective", collective, "--algorithm",
                         "file:" + file, "--size", "1MiB"});
  INFO("stderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "ultrasim: error: " + file + ": " + what + "\n");
}

// An all-reduce over 4 chips in 4 chunks with one step holding `transfer`.
std::string allreduce4(const std::string& name, const std::string& transfer) {
  return write_temp(name,
                    R"({"collective": "allreduce", "chips": 4, "chunks": 4, "steps": [[)" + transfer + "]]}");
}

}  // namespace

TEST_CASE("ring all-reduce written as data takes the built-in ring's time on switch:8 and ring:8") {
  auto size = GENERATE(as<std::string>{}, "1KiB", "1048579", "64MiB", "1GiB");  // 1048579: not divisible by 8
  for (const char* topology : {"switch:8", "ring:8"})
    check_same_as_builtin(topology, "allreduce", kExamples + "ring_allreduce_8.json", "ring", size);
}

TEST_CASE(
    "non-ring schedules as data match their built-ins: recursive-doubling all-gather, pairwise all-to-all") {
  for (const char* size : {"1KiB", "1048579", "64MiB"}) {
    check_same_as_builtin("switch:8", "allgather", kExamples + "recursive_doubling_allgather_8.json",
                          "recursive-doubling", size);
    check_same_as_builtin("switch:8", "alltoall", kExamples + "pairwise_alltoall_8.json", "pairwise", size);
  }
}

TEST_CASE("the generator writes ring all-reduce for any p, and the shipped examples are its output") {
  for (int p : {2, 5})
    for (const char* topology : {"switch:", "ring:"})
      check_same_as_builtin(topology + std::to_string(p), "allreduce", generate("ring-allreduce", p), "ring",
                            "1048579");
  CHECK(read_file(generate("ring-allreduce", 8)) == read_file(kExamples + "ring_allreduce_8.json"));
  CHECK(read_file(generate("recursive-doubling-allgather", 8)) ==
        read_file(kExamples + "recursive_doubling_allgather_8.json"));
  CHECK(read_file(generate("pairwise-alltoall", 8)) == read_file(kExamples + "pairwise_alltoall_8.json"));
}

TEST_CASE("on trn3 the 144-chip ring all-reduce as data gives the built-in ring's time") {
  std::string file = generate("ring-allreduce", 144);
  for (const char* size : {"1MiB", "1GiB"}) check_same_as_builtin("trn3", "allreduce", file, "ring", size);
}

TEST_CASE("a schedule with a dropped transfer runs but is reported unverified, exit status 3") {
  auto schedule = nlohmann::json::parse(read_file(kExamples + "ring_allreduce_8.json"));
  schedule["steps"][13].erase(0);  // last all-gather step: chip 0 no longer sends chunk 3 to chip 1
  std::string file = write_temp("dropped.json", schedule.dump());
  CliResult r = run_cli({"run", "--topology", "switch:8", "--collective", "allreduce", "--algorithm",
                         "file:" + file, "--size", "1MiB", "--format", "json"});
  CHECK(r.status == 3);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["verified"] == false);
  CHECK(j["wrong"] == 1);
  CHECK_THAT(j["first_error"].get<std::string>(), Catch::StartsWith("chip1 slot 3 holds"));
  CHECK(j["transfers"] == 14 * 8 - 1);
  // stderr carries the one line every failing run leaves, with the same first error.
  CHECK(r.err == "ultrasim: error: verification failed: " + j["first_error"].get<std::string>() + "\n");
}

TEST_CASE("bad schedule file: missing") {
  const std::string file = temp_path("no-such-schedule.json");
  CliResult r = run_cli({"run", "--topology", "switch:4", "--collective", "allreduce", "--algorithm",
                         "file:" + file, "--size", "1MiB"});
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "ultrasim: error: cannot read schedule file '" + file + "' (missing or not readable)\n");
}

TEST_CASE("bad schedule file: not JSON") {
  expect_bad_file(write_temp("not-json.json", "{\"collective\": \"allreduce\",\n \"chips\": 4,,\n}"),
                  "not valid JSON (syntax error at line 2, column 13)");
}

TEST_CASE("bad schedule file: a different collective than --collective") {
  expect_bad_file(kExamples + "ring_allreduce_8.json",
                  "the schedule's collective is allreduce, but --collective is allgather", "switch:8",
                  "allgather");
}

TEST_CASE("bad schedule file: a different chip count than the topology") {
  expect_bad_file(kExamples + "ring_allreduce_8.json",
                  "the schedule is for 8 chips, but topology ring:6 has 6", "ring:6");
}

TEST_CASE("bad schedule file: src out of range") {
  expect_bad_file(allreduce4("src.json", R"({"src": 4, "dst": 1, "chunk": 0, "op": "reduce"})"),
                  "step 0, transfer 0: \"src\" 4 is out of range: chips are 0..3");
}

TEST_CASE("bad schedule file: dst out of range") {
  expect_bad_file(allreduce4("dst.json", R"({"src": 0, "dst": -2, "chunk": 0, "op": "reduce"})"),
                  "step 0, transfer 0: \"dst\" -2 is out of range: chips are 0..3");
}

TEST_CASE("bad schedule file: a chip sending to itself") {
  expect_bad_file(allreduce4("self.json", R"({"src": 3, "dst": 3, "chunk": 0, "op": "reduce"})"),
                  "step 0, transfer 0: chip 3 sends to itself");
}

TEST_CASE("bad schedule file: an unknown op") {
  expect_bad_file(allreduce4("op.json", R"({"src": 0, "dst": 1, "chunk": 0, "op": "add"})"),
                  "step 0, transfer 0: unknown op 'add'; known: reduce, copy");
}

TEST_CASE("bad schedule file: chunk out of range") {
  expect_bad_file(
      allreduce4("chunk.json", R"({"src": 0, "dst": 1, "chunk": 4, "op": "reduce"})"),
      "step 0, transfer 0: \"chunk\" 4 is out of range: allreduce on 4 chips in 4 chunks has slots 0..3");
}

TEST_CASE("bad schedule file: a missing field") {
  expect_bad_file(allreduce4("field.json", R"({"src": 0, "dst": 1, "op": "reduce"})"),
                  "step 0, transfer 0: missing \"chunk\"");
  expect_bad_file(write_temp("steps.json", R"({"collective": "allreduce", "chips": 4, "chunks": 4})"),
                  "missing \"steps\"");
}

TEST_CASE("bad schedule file: two writes to one slot in one step that are not all reduces") {
  expect_bad_file(
      allreduce4("clash.json", R"({"src": 0, "dst": 1, "chunk": 2, "op": "copy"},
                                               {"src": 2, "dst": 1, "chunk": 2, "op": "copy"})"),
      "step 0, transfer 1: chip 1 slot 2 is also written by transfer 0 of this step; in one step a "
      "slot takes any number of reduces or a single copy");
}

TEST_CASE("a schedule path with a comma is quoted in CSV, so the row keeps its columns") {
  std::string file = write_temp("ring,8.json", read_file(kExamples + "ring_allreduce_8.json"));
  CliResult r = run_cli({"run", "--topology", "switch:8", "--collective", "allreduce", "--algorithm",
                         "file:" + file, "--size", "1MiB", "--format", "csv"});
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains(",allreduce,\"file:" + file + "\",1048576,"));
}
