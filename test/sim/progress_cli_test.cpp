// Progress on long work (topology/base/progress.hpp): a line redrawn in place on the standard error while
// it is a terminal (a pseudo-terminal here, as a user's), and nothing when it is a pipe or a file; the
// result on the standard output is the same either way. Ctrl-C on a sweep keeps its rows and says so.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "cli_runner.hpp"

using namespace ultrasim::test;

namespace {

// An all_reduce_perf table of 4 sizes (3 fitted when one is held out: no under-determined warning).
std::string small_log() {
  return temp_file(
      "progress.log",
      "#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong\n"
      "  1048576    262144  float  sum  -1    30.00  34.95   61.17  0    30.00  34.95   61.17  0\n"
      "  4194304   1048576  float  sum  -1    90.00  46.60   81.55  0    90.00  46.60   81.55  0\n"
      " 16777216   4194304  float  sum  -1   300.00  55.92   97.86  0   300.00  55.92   97.86  0\n"
      "268435456  67108864  float  sum  -1  4500.00  59.65  104.39  0  4500.00  59.65  104.39  0\n");
}

// A Chakra trace of 8 ranks (scripts/make_chakra_trace.py's dag: 7 nodes a rank); its prefix.
std::string dag_trace() {
  const std::string prefix = temp_path("progress-dag");
  const std::string command = "/usr/bin/python3 " ULTRASIM_SOURCE_DIR "/scripts/make_chakra_trace.py dag " +
                              prefix + " --ranks 8 --size 1MiB";
  REQUIRE(std::system(command.c_str()) == 0);
  return prefix;
}

struct LongWork {
  std::vector<std::string> args;
  std::string first, last;  // the progress line's first and last states
};

std::vector<LongWork> long_work() {
  const std::string sweep_out = temp_path("progress-sweep.jsonl");
  return {
      // The static frontier: 2 batch sizes x a prefill and a decode step.
      {{"serve", "--topology", "switch:8", "--model", "llama3-70b", "--tp", "8", "--batch", "1,8"},
       "serve: steps [0/4] 0:00:00 elapsed, ETA -",
       "serve: steps [4/4] "},
      // --phase decode and 3 routed batches per size: 2 x 3 steps.
      {{"serve", "--topology", "switch:8", "--model", "llama3-70b", "--tp", "8", "--batch", "1,8", "--phase",
        "decode", "--batches", "3"},
       "serve: steps [0/6] ",
       "serve: steps [6/6] "},
      // Arrivals: requests as they finish.
      {{"serve", "--topology", "switch:8", "--model", "llama3-70b", "--tp", "8", "--rate", "50",
        "--num-requests", "100"},
       "serve: requests finished [0/100] ",
       "serve: requests finished [100/100] "},
      {{"workload", "chakra:" + dag_trace(), "--topology", "switch:8"},
       "chakra: nodes [0/56] ",
       "chakra: nodes [56/56] "},
      // 2 fitted points x 46 fits, and 3 points priced before and after.
      {{"calibrate", "--topology", "switch:8", "--from", small_log(), "--hold-out", "16MiB"},
       "calibrate: points modelled [0/142] ",  // 46 efficiencies x 3 fitted sizes, then the 4 points
       "calibrate: points modelled [142/142] "},
      {{"sweep", "--topology", "switch:4", "--collective", "allreduce", "--algorithm", "ring", "--sizes",
        "1KiB,1MiB", "--out", sweep_out},
       "sweep [0/2] ",
       "sweep [2/2] "},
  };
}

}  // namespace

TEST_CASE("long work shows its progress on a terminal and nothing in a pipe, with the same result") {
  for (const LongWork& work : long_work()) {
    INFO(nlohmann::json(work.args).dump());
    const CliResult piped = run_cli(work.args), shown = run_cli_at_terminal(work.args);
    REQUIRE(piped.status == 0);
    REQUIRE(shown.status == 0);
    CHECK(piped.err.empty());  // no progress, no stray "\r"
    CHECK(shown.out == piped.out);
    // One line, redrawn with "\r" from its first state to its last, then ended.
    CHECK(shown.err.rfind("\r" + work.first, 0) == 0);
    const std::size_t last = shown.err.rfind("\r" + work.last);
    REQUIRE(last != std::string::npos);
    CHECK(shown.err.find('\n') == shown.err.size() - 1);
    CHECK(shown.err.substr(shown.err.size() - 2) == "\r\n");  // the terminal's "\n"
    const std::string end = " elapsed, ETA 0:00:00   \r\n";   // after the time taken, H:MM:SS
    CHECK(shown.err.size() - last == 1 + work.last.size() + 7 + end.size());
    CHECK(shown.err.substr(shown.err.size() - end.size()) == end);
  }
}

TEST_CASE("Ctrl-C on a sweep keeps the rows that finished, says how many, and --resume runs the rest") {
  const std::string out = temp_path("interrupted.jsonl"), err = temp_path("interrupted.err");
  const std::vector<std::string> args{
      "sweep",       "--topology", "switch:16", "--collective",     "allreduce",
      "--algorithm", "ring",       "--sizes",   "1MiB:16MiB:+1MiB", "--jobs",
      "1",           "--out",      out};
  // In a process group of its own, which gets the SIGINT a terminal sends on Ctrl-C: the sweep and the
  // point it runs.
  const pid_t pid = spawn_in_group(args, err);
  for (int waited = 0; waited < 1200 && read_json_lines(out).size() < 3; ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(-pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  const auto kept = read_json_lines(out);
  INFO("rows kept: " << kept.size());
  REQUIRE(kept.size() >= 3);
  REQUIRE(kept.size() < 16);
  for (std::size_t i = 0; i < kept.size(); ++i) CHECK(kept[i]["point"] == i);  // in order, no failed row
  CHECK(read_file(err) == "ultrasim: interrupted: " + std::to_string(kept.size()) +
                              " of 16 points finished, their rows kept in " + out +
                              "; the same command with --resume runs the other " +
                              std::to_string(16 - kept.size()) + "\n");
  std::vector<std::string> resume = args;
  resume.push_back("--resume");
  REQUIRE(run_cli(resume).status == 0);
  const auto rows = read_json_lines(out);
  REQUIRE(rows.size() == 16);
  for (std::size_t i = 0; i < rows.size(); ++i) CHECK(rows[i]["point"] == i);
}
