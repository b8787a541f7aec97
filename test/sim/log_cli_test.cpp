// The program's logger (topology/base/log.hpp): --log-level or ULTRASIM_LOG_LEVEL, warn by default; log
// lines go to the standard error only, results stay on the standard output.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "cli_runner.hpp"

using namespace ultrasim::test;

namespace {

const std::vector<std::string> kRun{"run",      "--topology",  "switch:8", "--collective",
                                    "alltoall", "--algorithm", "direct",   "--size",
                                    "1MiB",     "--format",    "json"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& extra) {
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("ultrasim logs through one logger: nothing by default, the engines' choices at debug") {
  const CliResult quiet = run_cli(kRun);
  REQUIRE(quiet.status == 0);
  CHECK(quiet.err.empty());
  // --log-level before the command or after its options: the same lines, the same result.
  for (const auto& args : {with({"--log-level", "debug"}, kRun), with(kRun, {"--log-level", "debug"})}) {
    const CliResult debug = run_cli(args);
    REQUIRE(debug.status == 0);
    nlohmann::json a = nlohmann::json::parse(debug.out), b = nlohmann::json::parse(quiet.out);
    a.erase("command"), b.erase("command");
    CHECK(a == b);
    CHECK(debug.err.find("ultrasim: [debug] auto: trying the contention-free engine (8 chips)") !=
          std::string::npos);
    // An all-to-all on one switch contends: the contention-free engine declines, the flow engine runs it.
    CHECK(debug.err.find("ultrasim: [info] auto: the contention-free engine declined: link ") !=
          std::string::npos);
    CHECK(debug.err.find("ultrasim: [debug] the flow engine: 56 transfers") != std::string::npos);
  }
  // warn (the default) and above leave the debug and info lines out.
  CHECK(run_cli(with(kRun, {"--log-level", "error"})).err.empty());
}

TEST_CASE(
    "the log level comes from ULTRASIM_LOG_LEVEL where --log-level is not given, and a bad one is refused") {
  setenv("ULTRASIM_LOG_LEVEL", "info", 1);
  const CliResult info = run_cli(kRun);
  const CliResult flag = run_cli(with(kRun, {"--log-level", "warn"}));  // the flag wins
  setenv("ULTRASIM_LOG_LEVEL", "debg", 1);
  const CliResult bad = run_cli(kRun);
  unsetenv("ULTRASIM_LOG_LEVEL");
  REQUIRE(info.status == 0);
  CHECK(info.err.find("ultrasim: [info] auto: the contention-free engine declined") != std::string::npos);
  CHECK(info.err.find("[debug]") == std::string::npos);
  CHECK(flag.err.empty());
  CHECK(bad.status == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err ==
        "ultrasim: error: unknown ULTRASIM_LOG_LEVEL level 'debg'; did you mean 'debug'? known: trace, "
        "debug, info, warn, error, off\n");
  expect_input_error(with(kRun, {"--log-level", "loud"}), "unknown --log-level level 'loud'");
}
