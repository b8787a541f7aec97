// The engines agree. Wherever the contention-free engine runs (no link direction ever carries two
// flows at once) it gives SimGrid's time to rounding, the same transfers, bytes and records; where
// flows meet, auto hands the run to the flow engine, and a forced contention-free run refuses, naming the
// link.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "cli_runner.hpp"
#include "sim/engines/engines.hpp"

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
    // Under the sanitizers the cases on trn3 and the 64-chip torus, kin of the switch's and the small
    // torus's, are left to the normal suite.
    if (kSanitized && (c.topology == "trn3" || c.topology == "tpu-v5p:4x4x4")) continue;
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
  expect_input_error(with({"--engine", "fsat"}),
                     "unknown engine 'fsat'; did you mean 'fast'? known: auto, contention-free, flow, fast, "
                     "matrix, simgrid");
  expect_input_error(with({"--engine", "fast", "--simgrid-cfg", "surf/precision:1e-9"}),
                     "--engine fast cannot use --platform or --simgrid-cfg");
  expect_input_error(with({"--engine", "contention-free", "--simgrid-cfg", "surf/precision:1e-9"}),
                     "--engine contention-free cannot use --platform or --simgrid-cfg");
  // With a SimGrid setting, auto runs SimGrid.
  auto j =
      nlohmann::json::parse(run_cli(with({"--simgrid-cfg", "surf/precision:1e-13", "--format", "json"})).out);
  CHECK(j["engine"] == "simgrid");
}

namespace {

// Every algorithm of every collective on `topology` (sweep --algorithm all) on `engine`, by point.
std::map<std::tuple<std::string, std::string, long long>, nlohmann::json> catalogue_on(
    const std::string& topology, const std::vector<std::string>& sets, const std::string& size,
    const std::string& engine) {
  const std::string out = temp_path("engines-catalogue-" + engine + ".jsonl");
  std::vector<std::string> args{"sweep",
                                "--topology",
                                topology,
                                "--collective",
                                "allreduce,allgather,reducescatter,alltoall,broadcast,reduce",
                                "--algorithm",
                                "all",
                                "--sizes",
                                size,
                                "--engine",
                                engine,
                                "--out",
                                out};
  for (const auto& set : sets) args.insert(args.end(), {"--set", set});
  run_cli(args);  // exits 1: switch-reduce and ring-2d do not run on every fabric, on any engine
  std::map<std::tuple<std::string, std::string, long long>, nlohmann::json> rows;
  for (auto& row : read_json_lines(out)) {
    // The key first: in `a[k] = std::move(row)` the right side is evaluated first (C++17).
    std::tuple<std::string, std::string, long long> key{row["collective"], row["requested_algorithm"],
                                                        row["bytes"].get<long long>()};
    rows[key] = std::move(row);
  }
  return rows;
}

}  // namespace

// Where a chip's wait ends at the very instant it starts (a receive delivered just as its own send ends,
// in symmetric pipelines), SimGrid's clock, a sum of event deltas, may leave a positive remainder of a
// few ulps, and SimGrid then sleeps its minimum, surf/precision (1e-13 s); the other engines compute
// that instant exactly and do not. A run may take a few such steps: 32 are allowed past 1e-9 relative.
// On this grid the largest is 28 (trn3-gen1 double-binary-tree all-reduce, 4 MiB); sim/DESIGN.md.
constexpr double kSimGridClockSlack = 32 * ultrasim::kSimGridPrecision;

TEST_CASE("the three engines agree on every algorithm of the catalogue, contended or not") {
  // Small kin of the fabrics the issue names (<= 64 chips; trn3, nvl72, clos:8x16, dragonfly and
  // cluster:2:trn3 themselves are scripts/bench's): the flow engine gives SimGrid's time to 1e-9 on every
  // point SimGrid runs, the same transfers and bytes, verified; auto agrees with both.
  struct Fabric {
    std::string topology;
    std::vector<std::string> sets;
  };
  const Fabric clos{"clos:4x8", {}}, cluster{"cluster:2:hgx-h100", {"switch_reduction=false"}};
  const std::vector<Fabric> fabrics = grid<Fabric>(
      {
          {"trn3-gen1", {}},
          clos,
          {"dragonfly", {"chips_per_router=2", "routers_per_group=4", "global_links_per_router=1"}},
          cluster,  // in-switch reduction: below
      },
      {clos, cluster});  // a fabric of one tier and one of groups under the sanitizers
  for (const std::string& size : grid_sizes({"1048579", "4MiB"}, {"1048579"})) {
    for (const Fabric& fabric : fabrics) {
      auto flow = catalogue_on(fabric.topology, fabric.sets, size, "flow"),
           simgrid = catalogue_on(fabric.topology, fabric.sets, size, "simgrid"),
           automatic = catalogue_on(fabric.topology, fabric.sets, size, "auto");
      int compared = 0;
      for (const auto& [point, reference] : simgrid) {
        if (reference["status"] != "ok") continue;
        INFO(fabric.topology << " " << std::get<0>(point) << " " << std::get<1>(point) << " " << size);
        const nlohmann::json &row = flow[point], &chosen = automatic[point];
        REQUIRE(row["status"] == "ok");
        ++compared;
        CHECK(row["engine"] == "flow");
        CHECK(row["verified"] == true);
        CHECK(chosen["engine"] != "simgrid");
        for (const nlohmann::json* run : {&row, &chosen}) {
          const double t = (*run)["time_s"], s = reference["time_s"];
          CHECK(std::abs(t - s) <= std::max(1e-9 * s, kSimGridClockSlack));
          for (const char* field : {"model_s", "bound_s", "transfers", "bytes_sent"})
            CHECK((*run)[field] == reference[field]);
        }
      }
      CHECK(compared >= 25);  // the catalogue's algorithms less those a fabric refuses
    }
  }
  // In-switch reduction (none of the fabrics above reduces in its switches): the flow engine, asked for by
  // name, is refused before the run (exit 2), and auto hands it to SimGrid, which gives the same time as
  // when asked for by name.
  const std::vector<std::string> in_switch{"run",
                                           "--topology",
                                           "switch:16",
                                           "--collective",
                                           "allreduce",
                                           "--algorithm",
                                           "switch-reduce",
                                           "--size",
                                           "1048579",
                                           "--set",
                                           "switch_reduction=true",
                                           "--format",
                                           "json"};
  auto with_engine = [&](const std::string& engine) {
    auto args = in_switch;
    args.insert(args.end(), {"--engine", engine});
    return run_cli(args);
  };
  CHECK(with_engine("flow").status == 2);
  CliResult chosen = with_engine("auto"), simgrid = with_engine("simgrid");
  REQUIRE(chosen.status == 0);
  REQUIRE(simgrid.status == 0);
  auto a = nlohmann::json::parse(chosen.out), s = nlohmann::json::parse(simgrid.out);
  CHECK(a["engine"] == "simgrid");
  CHECK(a["verified"] == true);
  CHECK(a["time_s"] == s["time_s"]);
}

TEST_CASE("a result that combines runs names the least exact engine among them") {
  using ultrasim::Engine;
  using ultrasim::least_exact;
  CHECK(least_exact(Engine::kContentionFree, Engine::kFlow) == Engine::kFlow);
  CHECK(least_exact(Engine::kFlow, Engine::kContentionFree) == Engine::kFlow);
  CHECK(least_exact(Engine::kSimGrid, Engine::kFlow) == Engine::kSimGrid);
  CHECK(least_exact(Engine::kSimGrid, Engine::kFast) == Engine::kFast);
  CHECK(least_exact(Engine::kFast, Engine::kContentionFree) == Engine::kFast);
  CHECK(least_exact(Engine::kFlow, Engine::kFlow) == Engine::kFlow);
}

TEST_CASE("the engine option reads a name of the table into a text or an Engine field, or refuses it") {
  using namespace ultrasim;
  struct Text {
    std::string engine = "auto";
  };
  struct Enum {
    Engine engine = Engine::kAuto;
  };
  const Option<Text> text = engine_option<Text>(&Text::engine, "as you like");
  const Option<Enum> id = engine_option<Enum>(&Enum::engine, "as you like");
  CHECK(text.takes == "auto|contention-free|flow|fast|matrix|simgrid");
  CHECK(text.meaning ==
        "what computes how transfers share the fabric (ultrasim list engines); auto: as you like");
  CHECK(text.default_text(Text{}) == "auto");
  CHECK(id.default_text(Enum{}) == "auto");
  Text t;
  Enum e;
  text.set(t, "fast", "--engine");
  id.set(e, "contention-free", "field 'engine'");
  CHECK(t.engine == "fast");
  CHECK(e.engine == Engine::kContentionFree);
  CHECK(text.value(t) == "fast");
  CHECK(id.value(e) == "contention-free");
  CHECK_THROWS_WITH(text.set(t, "flwo", "--engine"), Catch::Contains("did you mean 'flow'"));
  CHECK(t.engine == "fast");  // unchanged
  CHECK(engine_help("x") ==
        "what computes how transfers share the fabric (ultrasim list engines); auto: x "
        "(auto|contention-free|flow|fast|matrix|simgrid; default auto)");
}
