// The engines agree. Wherever the contention-free engine runs (no link direction ever carries two
// flows at once) it gives SimGrid's time to rounding, the same transfers, bytes and records; where
// flows meet, auto hands the run to the flow engine, and a forced contention-free run refuses, naming the
// link.
#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>

#include "cli_runner.hpp"

using namespace ultrasim::test;

namespace {

struct EngineCase {
  std::string topology, collective, algorithm, size;
  std::vector<std::string> sets;
  std::string engine;  // what auto picks
};

std::vector<std::string> args_of(const EngineCase& c, const std::string& engine, const std::string& trace) {
  std::vector<std::string> args{"run",         "--topology", c.topology, "--collective", c.collective,
                                "--algorithm", c.algorithm,  "--size",   c.size,         "--engine",
                                engine,        "--format",   "json",     "--trace",      trace};
  for (const auto& set : c.sets) args.insert(args.end(), {"--set", set});
  return args;
}

// (src, dst, bytes, step, path, start, end) of every transfer event of a trace, sorted.
using Event = std::tuple<int, int, long long, int, int, double, double>;
std::vector<Event> transfers_of(const std::string& trace_file) {
  std::vector<Event> out;
  // The document is kept: a range-for over a member of a temporary reads freed memory.
  const auto trace = nlohmann::json::parse(read_file(trace_file));
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "transfer")
      out.emplace_back(e["args"]["src"], e["args"]["dst"], e["args"]["bytes"], e["args"]["step"],
                       e["args"]["path"], e["ts"], e["ts"].get<double>() + e["dur"].get<double>());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("where no link carries two flows at once, the contention-free engine gives SimGrid's results") {
  const std::vector<EngineCase> cases{
      {"switch:8", "allreduce", "ring", "1GiB", {}, "contention-free"},
      {"switch:8",
       "allreduce",
       "ring",
       "1048579",
       {"pipeline_chunks=4", "reduce_bandwidth=200GBps"},
       "contention-free"},
      {"trn3", "allreduce", "ring", "1MiB", {}, "contention-free"},
      {"trn3", "allreduce", "hierarchical", "64MiB", {}, "contention-free"},
      {"ring:8", "allreduce", "bidir-ring", "1MiB", {}, "contention-free"},
      {"switch:16", "allreduce", "rabenseifner", "1MiB", {}, "contention-free"},
      {"switch:16", "allreduce", "recursive-doubling", "1000003", {}, "contention-free"},
      {"switch:9", "allgather", "bruck", "9MiB", {}, "contention-free"},
      {"switch:8", "broadcast", "scatter-allgather", "8MiB", {}, "contention-free"},
      {"tpu-v5p:4x4x4", "allreduce", "ring", "4MiB", {}, "contention-free"},
      {"torus:3x4", "allgather", "ring", "1000003", {}, "contention-free"},
      {"switch:9", "alltoall", "pairwise", "9MiB", {}, "contention-free"},
      {"switch:8", "broadcast", "chain", "16MiB", {}, "contention-free"},
      {"nvl72", "allreduce", "ring", "72MiB", {}, "contention-free"},  // striped over 18 planes
      {"switch:6", "alltoall", "direct", "6MB", {}, "flow"},           // six flows leave each chip at once
      {"switch:8", "allreduce", "switch-reduce", "1MiB", {"switch_reduction=true"}, "simgrid"},
  };
  for (const EngineCase& c : cases) {
    INFO(c.topology << " " << c.collective << " " << c.algorithm << " " << c.size);
    const std::string trace_a = temp_path("engines-auto.json"), trace_s = temp_path("engines-simgrid.json");
    CliResult a = run_cli(args_of(c, "auto", trace_a)), s = run_cli(args_of(c, "simgrid", trace_s));
    REQUIRE(a.status == 0);
    REQUIRE(s.status == 0);
    auto ja = nlohmann::json::parse(a.out), js = nlohmann::json::parse(s.out);
    CHECK(ja["engine"] == c.engine);
    CHECK(js["engine"] == "simgrid");
    CHECK(ja["time_s"].get<double>() == Approx(js["time_s"].get<double>()).epsilon(1e-12));
    CHECK(ja["verified"] == true);
    for (const char* field : {"model_s", "bound_s", "transfers", "bytes_sent", "wrong"})
      CHECK(ja[field] == js[field]);
    auto ea = transfers_of(trace_a), es = transfers_of(trace_s);
    REQUIRE(ea.size() == es.size());
    for (std::size_t i = 0; i < ea.size(); ++i) {
      CHECK(std::get<0>(ea[i]) == std::get<0>(es[i]));
      CHECK(std::get<1>(ea[i]) == std::get<1>(es[i]));
      CHECK(std::get<2>(ea[i]) == std::get<2>(es[i]));
      CHECK(std::get<3>(ea[i]) == std::get<3>(es[i]));
      CHECK(std::get<4>(ea[i]) == std::get<4>(es[i]));
      CHECK(std::get<5>(ea[i]) == Approx(std::get<5>(es[i])).margin(1e-6));  // µs: to the picosecond
      CHECK(std::get<6>(ea[i]) == Approx(std::get<6>(es[i])).margin(1e-6));
    }
  }
}

TEST_CASE("forced, the contention-free engine refuses a run in which flows share a link, naming it") {
  CliResult r = run_cli({"run", "--topology", "switch:4", "--collective", "alltoall", "--algorithm", "direct",
                         "--size", "4MiB", "--engine", "contention-free"});
  CHECK(r.status == 3);
  CHECK(r.out.empty());
  // Chip 0 starts its three flows at t = 0 on its one link to the switch.
  CHECK(r.err.find("ultrasim: error: the contention-free engine cannot run this exactly: link "
                   "chip0-switch0 (from chip0) carries chip0->chip1 [0, ") == 0);
  CHECK(r.err.find("use --engine simgrid or auto") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("the engine is chosen by name, and SimGrid's own inputs need SimGrid") {
  std::vector<std::string> run{"run",         "--topology", "switch:4", "--collective", "allreduce",
                               "--algorithm", "ring",       "--size",   "1MiB"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = run;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  expect_input_error(with({"--engine", "fast"}),
                     "unknown engine 'fast'; expected auto, simgrid, contention-free or flow");
  expect_input_error(with({"--engine", "contention-free", "--simgrid-cfg", "surf/precision:1e-9"}),
                     "--engine contention-free cannot use --platform or --simgrid-cfg");
  // With a SimGrid setting, auto runs SimGrid.
  auto j =
      nlohmann::json::parse(run_cli(with({"--simgrid-cfg", "surf/precision:1e-13", "--format", "json"})).out);
  CHECK(j["engine"] == "simgrid");
}
