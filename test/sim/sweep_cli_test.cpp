// ultrasim sweep end to end: failures recorded, determinism, shards, and a killed sweep resumed.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "cli_runner.hpp"

extern char** environ;

using namespace ultrasim::test;

namespace {

std::vector<std::string> sweep_args(const std::string& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"sweep",
                                "--topology",
                                "switch:4,ring:5",
                                "--collective",
                                "allreduce,alltoall",
                                "--algorithm",
                                "ring,direct,switch-reduce",
                                "--sizes",
                                "1KiB:1MiB:x32",
                                "--out",
                                out};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("a sweep records a failed point with its error and completes every other, sorted by point") {
  std::string out = temp_path("sweep_fail.jsonl");
  CliResult r = run_cli(sweep_args(out, {"--jobs", "2"}));
  REQUIRE(r.status == 0);
  auto rows = read_json_lines(out);
  REQUIRE(rows.size() == 2 * (2 + 2) * 3);  // all-reduce: ring, switch-reduce; all-to-all: ring, direct
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i]["point"] == i);
    bool failing = rows[i]["requested_algorithm"] == "switch-reduce";  // no reducing switches
    CHECK(rows[i]["status"] == (failing ? "error" : "ok"));
    CHECK(rows[i]["algorithm"] == rows[i]["requested_algorithm"]);  // refused rows name it too
    if (failing) {
      CHECK(rows[i]["exit_status"] == 2);
      CHECK_THAT(rows[i]["error"].get<std::string>(), Catch::Contains("switch_reduction=false"));
    } else {  // the row holds what `ultrasim run` of that point prints
      CHECK(rows[i]["verified"] == true);
      auto run = run_json({"--topology", rows[i]["topology"], "--collective", rows[i]["collective"],
                           "--algorithm", rows[i]["requested_algorithm"], "--size",
                           std::to_string(rows[i]["bytes"].get<std::uint64_t>())});
      CHECK(rows[i]["time_s"] == run["time_s"]);
      CHECK(rows[i]["model_s"] == run["model_s"]);
      CHECK(rows[i]["busbw_GBps"] == run["busbw_GBps"]);
    }
  }
  CHECK_THAT(r.out, Catch::Contains("24 points, 6 failed"));
  // By hand: switch:4 ring all-reduce 1 MiB = 6 steps of (1 us + 262144 B / 100 GB/s).
  CHECK(rows[2]["time_s"].get<double>() == Approx(6 * (1e-6 + 262144 / 100e9)).epsilon(1e-9));
}

TEST_CASE("a sweep's output is byte-identical run to run, and its shards add up to it") {
  std::string a = temp_path("sweep_a.jsonl"), b = temp_path("sweep_b.jsonl");
  REQUIRE(run_cli(sweep_args(a, {"--jobs", "2"})).status == 0);
  REQUIRE(run_cli(sweep_args(b, {"--jobs", "1"})).status == 0);
  CHECK(read_file(a) == read_file(b));
  std::vector<nlohmann::json> merged;
  for (int k = 0; k < 3; ++k) {
    std::string shard = temp_path("sweep_shard" + std::to_string(k) + ".jsonl");
    REQUIRE(run_cli(sweep_args(shard, {"--shard", std::to_string(k) + "/3"})).status == 0);
    for (auto& row : read_json_lines(shard)) {
      CHECK(row["point"].get<int>() % 3 == k);
      merged.push_back(row);
    }
  }
  std::sort(merged.begin(), merged.end(), [](auto& x, auto& y) { return x["point"] < y["point"]; });
  CHECK(merged == read_json_lines(a));
}

TEST_CASE("a sweep killed with SIGKILL and resumed ends with every point once, as if never killed") {
  std::vector<std::string> args{ULTRASIM_BINARY, "sweep",       "--topology", "switch:64", "--collective",
                                "allreduce",     "--algorithm", "ring",       "--sizes",   "1MiB:64MiB:+1MiB",
                                "--jobs",        "1",           "--out"};
  std::string killed = temp_path("sweep_killed.jsonl"), whole = temp_path("sweep_whole.jsonl");
  args.push_back(killed);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0);
  for (int waited = 0; waited < 600 && read_json_lines(killed).size() < 5; ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  auto partial = read_json_lines(killed);
  INFO("rows before the kill: " << partial.size());
  CHECK(partial.size() >= 5);
  CHECK(partial.size() < 64);

  std::vector<std::string> rest(args.begin() + 1, args.end());
  rest.push_back("--resume");
  REQUIRE(run_cli(rest).status == 0);
  std::vector<std::string> fresh(args.begin() + 1, args.end() - 1);
  fresh.push_back(whole);
  REQUIRE(run_cli(fresh).status == 0);
  auto rows = read_json_lines(killed);
  std::set<int> points;
  for (auto& row : rows) points.insert(row["point"].get<int>());
  CHECK(rows.size() == 64);
  CHECK(points.size() == 64);
  CHECK(read_file(killed) == read_file(whole));
}

TEST_CASE("resuming continues only a sweep's own rows, and leaves any other file as it was") {
  const std::vector<std::string> sweep{"sweep",     "--topology",  "switch:4", "--collective",
                                       "allreduce", "--algorithm", "ring",     "--sizes",
                                       "1KiB,2KiB", "--resume",    "--out"};
  auto with_out = [&](const std::string& path) {
    std::vector<std::string> args = sweep;
    args.push_back(path);
    return args;
  };
  for (const auto& [name, text, line] : std::vector<std::tuple<std::string, std::string, int>>{
           {"notes.jsonl", "my notes, not rows\n", 1},
           {"other.jsonl", "{\"id\": 1}\n{\"id\": 2}\n", 1},
           {"torn_inside.jsonl", "{\"point\":0,\"status\":\"ok\"\n{\"point\":1,\"status\":\"ok\"}\n", 1}}) {
    const std::string path = temp_file(name, text);
    expect_input_error(with_out(path), "--resume: '" + path + "' line " + std::to_string(line) +
                                           " is not a row of an ultrasim sweep (another program's file?); "
                                           "it was left as it was");
    CHECK(read_file(path) == text);
  }
  // A killed sweep's torn last line is its own: that point runs again.
  const std::string torn = temp_file("torn_last.jsonl", "{\"point\":1,\"sta");
  REQUIRE(run_cli(with_out(torn)).status == 0);
  CHECK(read_json_lines(torn).size() == 2);
}

TEST_CASE(
    "sweeping every algorithm lists the ones that do not apply once, with their reason, not once per size") {
  const CliResult r =
      run_cli({"sweep", "--topology", "ring:8", "--collective", "allreduce", "--algorithm", "all", "--sizes",
               "1KiB,2KiB", "--format", "csv", "--out", temp_path("all.csv")});
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out,
             Catch::Contains("# not run on ring:8 allreduce (they do not apply):\n"
                             "#   nvls: nvls needs reduction-capable switches; topology ring:8 has "
                             "switch_reduction=false (set switch_reduction=true for a what-if)\n"
                             "#   ring-2d: ring-2d runs on a two-dimensional torus (torus:XxY), not on "
                             "ring:8\n"
                             "#   switch-reduce: switch-reduce needs reduction-capable switches"));
  CHECK_THAT(r.out,
             Catch::Contains(" points, 6 failed (6 of them algorithms that do not apply, listed above)\n"));
  // The summary's best per size ranks only the ones that ran.
  CHECK_THAT(r.out, Catch::Contains("# best per size: ring:8 allreduce"));
}

TEST_CASE("bad sweep input is one line and exit status 2") {
  expect_input_error(
      {"sweep", "--topology", "switch:4", "--collective", "allreduce", "--sizes", "1KiB:1MiB:x1"},
      "factor >= 2");
  expect_input_error({"sweep", "--topology", "switch:4", "--collective", "allreduce", "--sizes", "1KiB",
                      "--set", "cross_rack_bandwidth=1GBps"},
                     "no topology, model or algorithm of this sweep has that parameter");
  expect_input_error(
      {"sweep", "--topology", "switch:4", "--collective", "allreduce", "--sizes", "1KiB", "--shard", "3/3"},
      "invalid --shard");
  expect_input_error(
      {"sweep", "--topology", "switch:4", "--collective", "allreduce", "--sizes", "1KiB", "--resume"},
      "--resume needs --out");
}

TEST_CASE(
    "the summary names each size's fastest algorithm and the fastest other one, seeds not counted twice") {
  std::string out = temp_path("sweep_summary.jsonl");
  CliResult r = run_cli({"sweep", "--topology", "switch:4", "--collective", "allreduce", "--algorithm",
                         "ring,one-shot", "--sizes", "1MiB", "--seeds", "0,1", "--out", out});
  REQUIRE(r.status == 0);
  // switch:4 at 1 MiB: ring 6 x (1 us + 262144 B / 100 GB/s) = 21.73 us; one-shot sends 3 x 1 MiB from
  // each chip at once: 1 us + 3145728 B / 100 GB/s = 32.46 us. Seed 1 repeats the ring: not a runner-up.
  CHECK_THAT(r.out, Catch::Contains("# best per size: switch:4 allreduce"));
  CHECK_THAT(r.out, Catch::Matches("[\\s\\S]*1048576  ring +21\\.73 .* one-shot +32\\.46\n[\\s\\S]*"));
}

TEST_CASE("a sweep passes --engine to every point, and auto picks per point") {
  const std::string simgrid = temp_path("sweep-engine-simgrid.jsonl"),
                    automatic = temp_path("sweep-engine-auto.jsonl");
  const std::vector<std::string> grid{"--topology",  "switch:4",    "--collective", "allreduce,alltoall",
                                      "--algorithm", "ring,direct", "--sizes",      "1MiB"};
  auto with = [&](const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> args{"sweep", "--out", out};
    args.insert(args.end(), grid.begin(), grid.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  REQUIRE(run_cli(with(simgrid, {"--engine", "simgrid"})).status == 0);
  REQUIRE(run_cli(with(automatic, {})).status == 0);
  auto s = read_json_lines(simgrid), a = read_json_lines(automatic);
  REQUIRE(s.size() == 3);  // all-reduce ring, all-to-all direct and ring
  REQUIRE(a.size() == 3);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(a[i]["collective"] << " " << a[i]["algorithm"]);
    CHECK(s[i]["engine"] == "simgrid");
    // The rings never put two flows on a link; the direct all-to-all does (3 flows leave each chip), so
    // auto gives it to the flow engine, whose max-min sharing agrees with SimGrid's to rounding.
    CHECK(a[i]["engine"] == (a[i]["algorithm"] == "ring" ? "contention-free" : "flow"));
    CHECK(a[i]["time_s"].get<double>() == Approx(s[i]["time_s"].get<double>()).epsilon(1e-12));
  }
  expect_input_error(with(temp_path("sweep-engine-bad.jsonl"), {"--engine", "fastest"}),
                     "unknown engine 'fastest'");
}

TEST_CASE("a sweep runs a schedule file as an algorithm: the ring written as data takes the ring's time") {
  const std::string out = temp_path("sweep_schedule.jsonl");
  const std::string schedule =
      std::string("file:") + ULTRASIM_SOURCE_DIR + "/collectives/schedules/ring_allreduce_8.json";
  CliResult r = run_cli({"sweep", "--topology", "switch:8", "--collective", "allreduce", "--algorithm",
                         "ring," + schedule, "--sizes", "1MiB", "--out", out});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = read_json_lines(out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[1]["status"] == "ok");
  CHECK(rows[1]["requested_algorithm"] == schedule);
  CHECK(rows[1]["verified"] == true);
  CHECK(rows[1]["time_s"] == rows[0]["time_s"]);
}
