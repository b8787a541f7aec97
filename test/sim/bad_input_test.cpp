// Bad input, end to end: every parser and input path (units, topology specs, --set, run and sweep options,
// sweep files, traffic matrices, schedules, topology files, tune rows, platforms, SimGrid settings, the
// memory guard) rejects a bad value with exit status 2 and one "ultrasim: error: " line naming it. Each
// table is one TEST_CASE (one CTest process); every row is a subprocess, none of them simulates.
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "cli_runner.hpp"

using namespace ultrasim::test;

namespace {

struct Case {
  std::vector<std::string> args;
  std::string fragment;  // what the message must contain: the bad value and what was expected
};

void expect_all(const std::vector<Case>& cases) {
  for (const Case& c : cases) expect_input_error(c.args, c.fragment);
}

// A file under the test's temp directory holding `text`; returns its path.
std::string file(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::vector<std::string> run(const std::vector<std::string>& extra,
                             const std::string& topology = "switch:4") {
  std::vector<std::string> args{"run",       "--topology",  topology, "--collective",
                                "allreduce", "--algorithm", "ring"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::vector<std::string> sweep(const std::vector<std::string>& extra) {
  std::vector<std::string> args{"sweep",     "--topology",  "switch:4", "--collective",
                                "allreduce", "--algorithm", "ring"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::vector<std::string> sweep_file(const std::string& name, const std::string& text) {
  return {"sweep", "--file", file(name, text)};
}

// A sweep file with `extra` added to a valid one ("sizes" given unless extra sets it).
std::string sweep_json(const std::string& extra) {
  return R"({"topologies": ["switch:4"], "collectives": ["allreduce"], )" + extra + "}";
}

std::vector<std::string> matrix(const std::string& name, const std::string& text) {
  return {"run",         "--topology", "switch:2",         "--collective",  "alltoallv",
          "--algorithm", "direct",     "--traffic-matrix", file(name, text)};
}

std::vector<std::string> schedule(const std::string& name, const std::string& text) {
  return {"run",
          "--topology",
          "switch:2",
          "--collective",
          "allreduce",
          "--algorithm",
          "file:" + file(name, text),
          "--size",
          "1KiB"};
}

std::vector<std::string> topology_file(const std::string& name, const std::string& text) {
  return {"topology", "file:" + file(name, text)};
}

// Two chips joined by one link; `link` adds fields to the link, `top` to the top level.
std::string two_chips(const std::string& link, const std::string& top = "") {
  return R"({"nodes": [{"name": "a"}, {"name": "b"}], "links": [{"a": "a", "b": "b", )" + link + "}]" + top +
         "}";
}

std::string graphml(const std::string& bandwidth) {
  return R"(<graphml><key id="bw" for="edge" attr.name="bandwidth" attr.type="string"/>)"
         R"(<graph edgedefault="undirected"><node id="a"/><node id="b"/>)"
         R"(<edge source="a" target="b"><data key="bw">)" +
         bandwidth + "</data></edge></graph></graphml>";
}

std::vector<std::string> tune(const std::string& name, const std::string& text) {
  return {"tune", "--from", file(name, text)};
}

const std::string kOkRow =
    R"("point": 0, "status": "ok", "topology": "switch:4", "collective": "allreduce", "algorithm": "ring", )"
    R"("bytes": 1024, "verified": true)";

}  // namespace

TEST_CASE("bad sizes, rates, times and ratios name the value and the accepted forms") {
  expect_all({
      {run({"--size", "-1"}), "invalid size '-1'"},
      {run({"--size", "nan"}), "invalid size 'nan'"},
      {run({"--size", "inf"}), "invalid size 'inf'"},
      {run({"--size", "1e400"}), "invalid size '1e400'"},
      {run({"--size", "1e-400"}), "invalid size '1e-400'"},
      {run({"--size", "99999999999999999999"}), "out of range: at most 2^53 bytes"},
      {run({"--size", "1.5"}), "invalid size '1.5'; expected a whole number of bytes"},
      {run({"--size", "1KiBx"}), "expected a byte count such as 4096, 64MiB or 1GB"},
      {run({"--size", "0x10"}), "invalid size '0x10'"},
      {run({"--size", " 4"}), "invalid size ' 4'"},
      {run({"--size", ""}), "--size is given an empty value"},
      {run({"--size", "1KiB", "--set", "link_bandwidth=1e308TBps"}),
       "invalid bandwidth '1e308TBps'; out of range"},
      {run({"--size", "1KiB", "--set", "link_bandwidth=0"}), "expected a positive rate"},
      {run({"--size", "1KiB", "--set", "link_bandwidth=-1GBps"}), "invalid bandwidth '-1GBps'"},
      {run({"--size", "1KiB", "--set", "link_latency=-1ns"}), "invalid time '-1ns'"},
      {run({"--size", "1KiB", "--set", "link_latency=1e999s"}), "invalid time '1e999s'"},
      {run({"--size", "1KiB", "--set", "link_efficiency=1/0"}), "the denominator must be > 0"},
      {run({"--size", "1KiB", "--set", "link_efficiency=1e300/1e-300"}), "out of range"},
      {run({"--size", "1KiB", "--set", "link_efficiency=2"}),
       "parameter link_efficiency: '2' is out of range; expected (0, 1]"},
  });
}

TEST_CASE("bad topology specs name the spec and the expected shape") {
  expect_all({
      {{"topology", ""}, "argument 2 is empty; expected a command, an option or a value"},
      {{"topology", "swich:4"}, "did you mean 'switch'"},
      {{"topology", "switch"}, "needs a chip count, e.g. switch:16"},
      {{"topology", "switch:0"}, "invalid count '0'; expected a positive integer"},
      {{"topology", "switch:-1"}, "invalid count '-1'"},
      {{"topology", "switch:99999999999999999999"}, "invalid count '99999999999999999999'"},
      {{"topology", "switch:4x"}, "invalid count '4x'"},
      {{"topology", "torus:0x4"}, "invalid torus dimensions '0x4'"},
      {{"topology", "torus:4xx4"}, "expected positive sizes such as 4x4x4"},
      {{"topology", "torus:2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2"}, "more than 262144 chips"},
      {{"topology", "clos:0x4"}, "invalid clos shape '0x4'"},
      {{"topology", "fattree:3"}, "K must be even"},
      {{"topology", "trn3:1"}, "takes no arguments; got 'trn3:1'"},
      {{"topology", "cluster:2"}, "needs a domain count and a preset"},
      {{"topology", "cluster:2:cluster:2:trn3"}, "a cluster of clusters is not supported"},
      {{"topology", "tpu-v5p:100x100x100"}, "more than 8960 chips"},
      {{"topology", "switch:4", "--format", "xml"}, "unknown format 'xml'"},
  });
}

TEST_CASE("bad command-line options and words name the option") {
  expect_all({
      {{"frobnicate"}, "unknown command 'frobnicate'"},
      {{},
       "expected a command: list, topology, run, sweep, tune, calibrate, calibrate-chip, moe, serve, train, "
       "plan or workload"},
      {{"run", "--topology", "switch:4"}, "--collective is required"},
      {run({"--size", "1KiB", "--size", "2KiB"}), "--size"},
      {run({"--size", "1KiB", "--bogus"}), "--bogus"},
      {run({"--size", "1KiB", "--format", "xml"}), "unknown format 'xml'; known: table, json, csv"},
      {run({"--size", "1KiB", "--engine", "fastest"}), "unknown engine 'fastest'"},
      // --check-engine: how many of the workload's exchanges, before anything is built.
      {run({"--size", "1KiB", "--check-engine", "2"}),
       "--check-engine 2: the exchanges to check, from 1 to 1 (run has one: the collective)"},
      {{"moe", "--experts", "8", "--top-k", "2", "--tokens-per-chip", "4", "--hidden", "64", "--batches", "2",
        "--router", "random", "--check-engine", "3"},
       "--check-engine 3: the exchanges to check, from 1 to 2 (one MoE layer per batch, --batches)"},
      {{"serve", "--model", "deepseek-v3", "--check-engine", "62"},
       "--check-engine 62: the exchanges to check, from 1 to 61 (one exchange per layer at most; the model "
       "has 61 layers)"},
      {run({"--size", "1KiB", "--seed", "-1"}), "invalid seed '-1'"},
      {run({"--size", "1KiB", "--seed", "99999999999999999999"}), "invalid seed '99999999999999999999'"},
      {run({"--size", "1KiB", "--seed", "1.5"}), "invalid seed '1.5'"},
      {run({"--size", "1KiB", "--dtype", "float31"}), "did you mean 'float32'"},
      {run({"--size", "1KiB", "--set", "foo"}), "invalid --set 'foo'; expected name=value"},
      {run({"--size", "1KiB", "--set", "linkbandwidth=1GBps"}), "did you mean 'link_bandwidth'"},
      {run({"--size", "1KiB", "--set", "multipath=sideways"}), "unknown value 'sideways'"},
      {run({"--size", "1KiB", "--set", "switch_reduction=maybe"}), "invalid boolean 'maybe'"},
      {run({"--size", "1KiB", "--trace", "/nonexistent/dir/t.json"}),
       "cannot write trace '/nonexistent/dir/t.json'"},
      {run({"--size", "1KiB", "--link-stats", "/nonexistent/dir/l.csv"}),
       "cannot write link statistics '/nonexistent/dir/l.csv'"},
      {run({"--size", "1KiB", "--no-link-stats", "--explain"}),
       "--no-link-stats leaves nothing for --explain or --link-stats"},
      {{"run", "--topology", "switch:4", "--collective", "allreduc", "--algorithm", "ring", "--size", "1"},
       "did you mean 'allreduce'"},
      {{"run", "--topology", "switch:4", "--collective", "allreduce", "--algorithm", "rign", "--size", "1"},
       "did you mean 'ring'"},
      // A newline or a byte that is not UTF-8 in a value stays on the one line, escaped.
      {{"topology", "sw\nitch:4"}, "unknown topology 'sw\\x0aitch'"},
      {{"topology", "sw\xffitch:4"}, "unknown topology 'sw\\xffitch'"},
  });
}

TEST_CASE("bad sweep flags are refused before any point runs") {
  expect_all({
      {sweep({"--sizes", "1:1GiB:+1"}), "has more than 100000 sizes"},  // used to hang making 1e9 sizes
      {sweep({"--sizes", "1", "--seeds", "0:99999999999999"}), "gives more than 100000 seeds"},  // hung too
      {sweep({"--sizes", "1:1KiB:x1"}), "a factor >= 2"},
      {sweep({"--sizes", "1KiB:1:x2"}), "FROM is larger than TO"},
      {sweep({"--sizes", "1:16:+0"}), "the step is 0"},
      {sweep({"--sizes", ","}), "--sizes: ',' has an empty item"},
      {sweep({"--sizes", "1", "--seeds", "1:2:3"}), "expected A:B or a list"},
      {sweep({"--sizes", "1", "--set", "link_bandwidth="}),
       "--set link_bandwidth= gives no value"},  // crashed
      {sweep({"--sizes", "1", "--set", "foo=1"}), "--set foo: no topology, model or algorithm"},
      {sweep({"--sizes", "1", "--shard", "1/2x"}), "invalid --shard '1/2x'"},  // was read as 1/2
      {sweep({"--sizes", "1", "--shard", "2/2"}), "expected K/N with 0 <= K < N"},
      {sweep({"--sizes", "1", "--jobs", "-1"}), "invalid --jobs '-1'"},  // was taken as the default
      {sweep({"--sizes", "1", "--jobs", "100000"}), "--jobs 100000 is more than 4 x the"},
      {sweep({"--sizes", "1", "--timing", "/nonexistent/dir/t"}),
       "cannot write --timing file"},  // was ignored
      {sweep({"--sizes", "1", "--out", "/nonexistent/dir/o"}),
       "cannot write --out file '/nonexistent/dir/o'"},
      {sweep({"--sizes", "1", "--resume"}), "--resume needs --out FILE"},
      {{"sweep", "--file", "/nonexistent/sweep.json"}, "cannot read sweep file '/nonexistent/sweep.json'"},
      {{"sweep", "--file", temp_path("")}, "is a directory"},
  });
}

TEST_CASE("bad sweep files name the key and what it must hold") {
  expect_all({
      {sweep_file("s1.json", R"({"topologies": "switch:4", "collectives": ["allreduce"], "sizes": [1]})"),
       R"("topologies" must be a list, not "switch:4")"},
      {sweep_file("s2.json", sweep_json(R"("sizes": [-1])")), R"("sizes" must list whole numbers >= 0)"},
      {sweep_file("s3.json", sweep_json(R"("sizes": [1.5])")), "not 1.5"},    // was truncated to 1
      {sweep_file("s4.json", sweep_json(R"("sizes": [true])")), "not true"},  // was an internal error
      {sweep_file("s5.json", sweep_json(R"("sizes": ["1KiBx"])")), "invalid size '1KiBx'"},
      {sweep_file("s6.json", sweep_json(R"("sizes": [1], "seeds": ["a"])")), R"("seeds" must list whole)"},
      {sweep_file("s7.json", sweep_json(R"("sizes": [1], "seeds": [])")), R"("seeds" is empty)"},
      {sweep_file("s8.json", sweep_json(R"("sizes": [1], "sets": ["a"])")), R"("sets" must be an object)"},
      {sweep_file("s9.json", sweep_json(R"("sizes": [1], "sets": {"link_bandwidth": []})")),  // crashed
       R"("sets.link_bandwidth" must be a non-empty list)"},
      {sweep_file("s10.json", sweep_json(R"("sizes": [1], "algorithms": null)")),
       R"("algorithms" must be a list)"},
      {sweep_file("s11.json", sweep_json(R"("sizes": [1e400])")), "number overflow"},
      {sweep_file("s12.json", sweep_json(R"("sizes": [1], "colour": 1)")), "unknown key 'colour'"},
      {sweep_file("s13.json", R"({"topologies": ["switch:4"], "siz)"), "is not JSON"},
      {sweep_file("s14.json", "[]"), "expected an object"},
      {sweep_file("s15.json", "\xff\xfe\x01junk"), "is not JSON"},
  });
}

TEST_CASE("bad traffic matrices name the file, the row and the entry") {
  expect_all({
      {matrix("m1.csv", "0,1\n1\n"), "line 2 has 1 entries but line 1 has 2"},
      {matrix("m2.csv", "0,-1\n1,0\n"), "'-1' is negative"},
      {matrix("m3.csv", "0,1e400\n1,0\n"), "invalid size '1e400'"},
      {matrix("m4.csv", ""), "no rows"},
      {matrix("m5.json", "[[0,1],[1,0]"), "invalid JSON"},
      {matrix("m6.json", "[[0,true],[1,0]]"), "row 0, column 1: expected a byte count"},
      {matrix("m7.json", "[[0,1.5],[1,0]]"), "1.5 is not a whole number of bytes"},
      // An entry over 2^53 is refused before the sums (which a row of them overflowed past 2^64).
      {matrix("m8.json", "[[0,18446744073709551615],[18446744073709551615,0]]"),
       "row 0, column 1: invalid size '18446744073709551615'; out of range: at most 2^53 bytes"},
      {matrix("m9.json", "[[0,1,1],[1,0,1],[1,1,0]]"), "is 3 x 3 but topology 'switch:2' has 2 chips"},
      {{"run", "--topology", "switch:2", "--collective", "alltoallv", "--algorithm", "direct",
        "--traffic-matrix", temp_path("")},
       "is a directory"},
  });
}

TEST_CASE("bad schedule files name the file, the step and the transfer") {
  expect_all({
      {schedule("x1.json", "{"), "not valid JSON"},
      {schedule("x2.json", R"({"collective": "allreduce", "chips": 2, "chunks": 1, "steps": "no"})"),
       R"("steps" must be an array)"},
      {schedule(
           "x3.json",
           R"({"collective": "allreduce", "chips": 2, "chunks": 1, "steps": [[{"src": 0, "dst": 0, "chunk": 0, "op": "copy"}]]})"),
       "step 0, transfer 0: chip 0 sends to itself"},
      {schedule("x4.json", R"({"collective": "allreduce", "chips": 99999999999, "chunks": 1, "steps": []})"),
       R"("chips" 99999999999 is out of range)"},
      {schedule("x5.json", R"({"collective": "allreduce", "chips": 4, "chunks": 1, "steps": [[]]})"),
       "the schedule is for 4 chips, but topology switch:2 has 2"},
      {{"run", "--topology", "switch:2", "--collective", "allreduce", "--algorithm", "file:", "--size", "1"},
       "--algorithm file: needs a path"},
      {{"run", "--topology", "switch:2", "--collective", "allreduce", "--algorithm", "file:" + temp_path(""),
        "--size", "1"},
       "is a directory"},
  });
}

TEST_CASE("bad topology files name the file, the element and the field") {
  expect_all({
      {topology_file("t1.json", two_chips(R"("raw_bandwidth_Bps": -5)")), "bandwidth must be finite and > 0"},
      {topology_file("t2.json", two_chips(R"("raw_bandwidth_GBps": 1e300)")), "got inf"},  // was accepted
      {topology_file("t3.json", two_chips(R"("raw_bandwidth_Bps": 1e400)")), "number overflow"},  // internal
      {topology_file("t4.json", two_chips(R"("raw_bandwidth_Bps": 1e9, "latency_s": -1)")),
       "latency must be a finite time >= 0"},
      {topology_file("t5.json", two_chips(R"("raw_bandwidth_Bps": 1e9, "efficiency": 5)")),
       "efficiency must be in (0, 1], got 5"},
      {topology_file("t6.json", two_chips(R"("raw_bandwidth_Bps": "fast")")), "invalid bandwidth 'fast'"},
      {topology_file("t7.json", two_chips(R"("raw_bandwidth_Bps": 1e9, "lanes": 1.5)")), "lanes: expected"},
      {topology_file("t8.json", R"({"nodes": [{"name": "a", "server": 5000000000}, {"name": "b"}]})"),
       "server: expected a whole number from 0 to 2147483647, got 5000000000"},  // was cast to a negative int
      {topology_file("t9.json", R"({"nodes": [{"name": "a", "kind": "router"}]})"), "unknown kind 'router'"},
      {topology_file("t10.json", R"({"nodes": "x"})"), "nodes: expected an array of nodes"},
      {topology_file("t11.json", R"({"nodes": [{"name": "a"}, {"name": "b"}]})"), "is disconnected"},
      {topology_file("t12.json", "{\"nodes\": ["), "not valid JSON"},
      {topology_file("t13.json", "\x01\x02 binary"), "neither JSON (an object) nor GraphML"},
      {{"topology", "file:" + temp_path("")}, "is a directory"},
      {{"topology", "file:/nonexistent/t.json"}, "cannot read topology file '/nonexistent/t.json'"},
      {topology_file("g1.graphml", graphml("-1")), "edge #0 (a -- b): bandwidth: invalid bandwidth '-1'"},
      {topology_file("g2.graphml", "<graphml><graph"), "not valid GraphML"},
      {topology_file("g3.graphml", "<graphml></graphml>"), "no <graph> element"},
      {topology_file("g4.graphml", R"(<graphml><graph edgedefault="directed"><node id="a"/><node id="b"/>)"
                                   R"(<edge source="a" target="b"/></graph></graphml>)"),
       "directed edges"},
      {topology_file("g5.graphml", R"(<graphml><graph><node id="a"/><node id="a"/></graph></graphml>)"),
       "node 'a': duplicate node id"},
  });
}

TEST_CASE("bad tune rows name the file and the line") {
  expect_all({
      {tune("r1.jsonl", R"({"point": 0, "status": "ok"})"), "r1.jsonl:1: row has no \"topology\""},
      {tune("r2.jsonl", "{" + kOkRow + R"(, "time_s": 1e400})"),
       "r2.jsonl: line 1: field \"time_s\" is out of range"},
      {tune("r3.jsonl", "{" + kOkRow + R"(, "time_s": "1"})"), R"("time_s" is not a time)"},
      {tune("r4.jsonl", R"({"point": "a", "status": "ok"})"), R"("point" is not an integer)"},
      {tune("r5.jsonl", ""), "no usable rows"},
      {{"tune", "--from", temp_path("")}, "is a directory"},  // was "no usable rows"
      {{"tune", "--from", "/nonexistent/rows.jsonl"}, "cannot read sweep rows"},
  });
}

TEST_CASE("bad platforms and SimGrid settings are refused before SimGrid aborts on them") {
  const std::string xml = file("bad.xml", "<platform");
  expect_all({
      {run({"--size", "1", "--platform", temp_path("")}), "is a directory"},  // flex's bare message before
      {run({"--size", "1", "--platform", "/nonexistent/p.xml"}), "cannot read platform '/nonexistent/p.xml'"},
      {run({"--size", "1", "--platform", xml}), "cannot load platform"},
      // Only settings that change how SimGrid computes, not what, pass (sim/engines/simgrid/platform.hpp).
      {run({"--size", "1", "--simgrid-cfg", "network/model:bogus"}),
       "network/model: not a setting"},  // aborted
      {run({"--size", "1", "--simgrid-cfg", "network/model:LV08"}),
       "network/model: not a setting"},                                                        // inexact
      {run({"--size", "1", "--simgrid-cfg", "network/bandwidth-factor:0"}), "not a setting"},  // aborted
      {run({"--size", "1", "--simgrid-cfg", "network/optim:x"}),
       "network/optim: unknown value 'x'"},  // aborted
      {run({"--size", "1", "--simgrid-cfg", "surf/precision:0"}),
       "expected a number in [1e-15, 1e-05]"},  // hung
      {run({"--size", "1", "--simgrid-cfg", "contexts/stack-size:0"}),
       "expected a number in [16, "},  // crashed
      {run({"--size", "1", "--simgrid-cfg", "contexts/factory:thread"}),
       "unknown value 'thread'"},                                                                // deadlocked
      {run({"--size", "1", "--simgrid-cfg", "foo:bar"}), "foo: not a setting ultrasim passes"},  // one line
      {run({"--size", "1", "--simgrid-cfg", "nocolon"}), "expected name:value"},
  });
}

TEST_CASE("the memory guard refuses a configuration that would not fit, saying how much it needs") {
  unsetenv("ULTRASIM_MEMORY_LIMIT");
  // A routing tree from each of 128,000 chips (a fat tree declares no symmetry): no machine has that;
  // this used to end in std::bad_alloc (exit 1).
  expect_input_error({"topology", "fattree:80"}, "of memory (128000 chips");
  // A ring builds the routes of a few pairs per chip; a direct all-to-all every pair's.
  expect_input_error(run({"--size", "1"}, "fattree:80"), "routes of 512000 chip pairs");
  expect_input_error({"run", "--topology", "torus:400x400", "--collective", "alltoall", "--algorithm",
                      "direct", "--size", "1"},
                     "routes of 25599840000 chip pairs");
  // With a limit set, a small run is measured against it instead of MemAvailable.
  setenv("ULTRASIM_MEMORY_LIMIT", "64MiB", 1);
  expect_input_error({"run", "--topology", "switch:64", "--collective", "alltoall", "--algorithm", "direct",
                      "--size", "1MiB"},
                     "is available (ULTRASIM_MEMORY_LIMIT=64MiB)");
  // A direct exchange counts a message to every peer in flight per chip (64 x 63), a ring 4 per chip.
  expect_input_error({"run", "--topology", "switch:64", "--collective", "alltoall", "--algorithm", "direct",
                      "--size", "1MiB"},
                     "4032 flows in flight");
  expect_input_error({"run", "--topology", "switch:64", "--collective", "allreduce", "--algorithm", "ring",
                      "--size", "1MiB"},
                     "256 flows in flight");
  // Per flow in flight, SimGrid needs 2048 B and the flow engine 768 B (sim/machine/memory_guard.hpp): a
  // limit between the two estimates lets auto run a contended all-to-all (on the flow engine) and refuses
  // it in SimGrid, before SimGrid starts.
  setenv("ULTRASIM_MEMORY_LIMIT", "200MiB", 1);
  const std::vector<std::string> contended{"run",      "--topology",  "switch:256", "--collective",
                                           "alltoall", "--algorithm", "direct",     "--size",
                                           "1KiB",     "--format",    "json"};
  CliResult on_flow = run_cli(contended);
  REQUIRE(on_flow.status == 0);
  CHECK(nlohmann::json::parse(on_flow.out)["engine"] == "flow");
  auto on_simgrid = contended;
  on_simgrid.insert(on_simgrid.end(), {"--engine", "simgrid"});
  expect_input_error(on_simgrid, "this run on switch:256 in SimGrid needs an estimated 0.2 GiB of memory");
  expect_input_error(on_simgrid, "65280 flows in flight x 2048 B in SimGrid");
  // A SimGrid XML export holds a route per pair of chips, built whole: torus:16x16x8's is 2.3 GB of text
  // and peaked at 5.4 GB, in 50 s. Its estimate (5.8 GiB) is refused at once under a 4 GiB limit; the
  // graph alone (summary, JSON, DOT) still fits.
  setenv("ULTRASIM_MEMORY_LIMIT", "4GiB", 1);
  expect_input_error(
      {"topology", "torus:16x16x8", "--format", "simgrid-xml"},
      "exporting torus:16x16x8 as SimGrid XML needs an estimated 5.8 GiB of memory (2048 chips, 0 "
      "switches, 6144 links; routing trees from 1 chips, 2.3 GiB of SimGrid XML text)");
  CHECK(run_cli({"topology", "torus:16x16x8", "--format", "dot"}).status == 0);
  setenv("ULTRASIM_MEMORY_LIMIT", "lots", 1);
  expect_input_error(run({"--size", "1"}), "invalid ULTRASIM_MEMORY_LIMIT 'lots'");
  setenv("ULTRASIM_MEMORY_LIMIT", "off", 1);
  CHECK(run_cli(run({"--size", "1"})).status == 0);
  unsetenv("ULTRASIM_MEMORY_LIMIT");
}

TEST_CASE("a path that is not UTF-8 is not an error: JSON output shows its bad byte as U+FFFD") {
  // This used to end in nlohmann's type_error 316 (exit status 1) when the command or algorithm was dumped.
  const std::string path = temp_path("ring\xff.json");
  std::ofstream(path) << read_file(std::string(ULTRASIM_SOURCE_DIR) +
                                   "/collectives/schedules/ring_allreduce_8.json");
  CliResult r = run_cli({"run", "--topology", "switch:8", "--collective", "allreduce", "--algorithm",
                         "file:" + path, "--size", "1MiB", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  auto json = nlohmann::json::parse(r.out);
  CHECK(json["algorithm"] == "file:" + temp_path("ring\xef\xbf\xbd.json"));
  CHECK(json["verified"] == true);
}

// ---- Round two (issue "hardening, round two"): each class below probed in every subcommand that reads
// that kind of input. expect_input_error also holds each refusal to 5 s and 512 MiB.

namespace {

// `levels` nested JSON arrays around `inner`: what a parser that recursed would crash on.
std::string deep_json(int levels, const std::string& inner = "") {
  return std::string(levels, '[') + inner + std::string(levels, ']');
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& extra) {
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

const std::string kMoe[] = {"moe", "--topology",        "switch:4", "--experts", "4", "--top-k",
                            "1",   "--tokens-per-chip", "2",        "--hidden",  "8"};
std::vector<std::string> moe(const std::vector<std::string>& extra) {
  return with(std::vector<std::string>(std::begin(kMoe), std::end(kMoe)), extra);
}

}  // namespace

TEST_CASE("deeply nested input is refused at 64 levels in every reader, never a crash") {
  const std::string deep = deep_json(100000);
  std::string deep_xml;
  for (int i = 0; i < 100000; ++i) deep_xml += "<a>";
  for (int i = 0; i < 100000; ++i) deep_xml += "</a>";
  expect_all({
      {matrix("deep_matrix.json", deep), "JSON nested deeper than 64 levels"},
      {matrix("deep_matrix2.json", R"({"bytes": )" + deep + "}"), "nested deeper than 64"},
      {sweep_file("deep_sweep.json", R"({"topologies": ["switch:4"], "sets": )" + deep + "}"),
       "nested deeper than 64"},
      {schedule("deep_schedule.json",
                R"({"collective": "allreduce", "chips": 2, "chunks": 2, "steps": )" + deep + "}"),
       "nested deeper than 64"},
      {topology_file("deep_topology.json", R"({"nodes": )" + deep + "}"), "nested deeper than 64"},
      {topology_file("deep.graphml", "<graphml>" + deep_xml + "</graphml>"),
       "XML nested deeper than 64 elements"},
      {run({"--size", "1", "--platform",
            file("deep_platform.xml", "<platform version=\"4.1\">" + deep_xml + "</platform>")}),
       "XML nested deeper than 64 elements"},
      {{"workload", file("deep_workload.json", R"({"workload": "training", "stages": )" + deep + "}")},
       "nested deeper than 64"},
      {{"tune", "--from", file("deep_rows.jsonl", R"({"point": )" + deep + "}")}, "nested deeper than 64"},
      {moe({"--expert-load", file("deep_load.json", deep)}), "nested deeper than 64"},
      {run({"--size", "1", "--stack",
            file("deep_stack.json", R"({"name": "x", "protocols": )" + deep + "}")}),
       "nested deeper than 64"},
      {{"calibrate", "--topology", "switch:8", "--from",
        file("deep_log.json", R"({"results": )" + deep + "}")},
       "nested deeper than 64"},
  });
}

TEST_CASE("a device or an oversized file is refused unread in every reader") {
  // /dev/zero never ends: it used to be read to ~4 GB. A regular file over 64 MiB is refused by its size.
  const std::string big = temp_path("big.json");
  {
    std::ofstream out(big, std::ios::binary);
    const std::string block(1 << 20, ' ');
    for (int i = 0; i < 65; ++i) out << block;
  }
  // Through a link named .json, as a FILE.json stack must be named: the device is what counts.
  const std::string zero = temp_path("zero.json");
  REQUIRE(symlink("/dev/zero", zero.c_str()) == 0);
  for (const std::string& path : {zero, big}) {
    const std::string what =
        path == big ? "over the 64 MiB limit of an input file" : "is a device, not a file";
    const std::vector<std::string> with_schedule{"run",          "--topology", "switch:2",
                                                 "--collective", "allreduce",  "--algorithm",
                                                 "file:" + path, "--size",     "1KiB"};
    expect_all({
        {{"run", "--topology", "switch:2", "--collective", "alltoallv", "--algorithm", "direct",
          "--traffic-matrix", path},
         what},
        {with_schedule, what},
        {run({"--size", "1", "--stack", path}), what},
        {run({"--size", "1", "--platform", path}), what},
        {{"topology", "file:" + path}, what},
        {{"sweep", "--file", path}, what},
        {{"tune", "--from", path}, what},
        {{"calibrate", "--topology", "switch:8", "--from", path}, what},
        {moe({"--expert-load", path}), what},
        {{"workload", path}, what},
        // serving's readers, each naming the file: "model file '.../zero.json' is a device, not a file"
        {{"serve", "--model-file", path}, "model file '" + path + "'"},
        {{"serve", "--lengths", path}, "lengths file '" + path + "'"},
        {{"serve", "--requests", path}, "request trace '" + path + "'"},
        {{"serve", "--chip", path}, "chip profile '" + path + "'"},
        {{"calibrate-chip", "--from", path}, "kernel times '" + path + "'"},
    });
  }
}

TEST_CASE("a key given twice in one JSON object is refused, in every JSON reader") {
  const std::string twice = R"("a": 1, "a": 2)";
  expect_all({
      {matrix("dup_matrix.json", R"({"bytes": [[0, 1], [1, 0]], "bytes": [[0, 2], [2, 0]]})"),
       R"(key "bytes" appears twice in one object)"},
      {sweep_file("dup_sweep.json", R"({"topologies": ["switch:4"], "topologies": ["ring:4"]})"),
       R"(key "topologies" appears twice)"},
      {schedule("dup_schedule.json", R"({"collective": "allreduce", "collective": "allgather", "chips": 2})"),
       R"(key "collective" appears twice)"},
      {topology_file("dup_topology.json", two_chips(R"("raw_bandwidth_GBps": 1, "raw_bandwidth_GBps": 2)")),
       R"(key "raw_bandwidth_GBps" appears twice)"},
      {{"workload", file("dup_workload.json", R"({"workload": "moe", "workload": "training"})")},
       R"(key "workload" appears twice)"},
      {{"tune", "--from", file("dup_rows.jsonl", R"({"point": 0, "point": 1})")},
       R"(key "point" appears twice)"},
      {run({"--size", "1", "--stack", file("dup_stack.json", R"({"name": "x", "name": "y"})")}),
       R"(key "name" appears twice)"},
      {{"calibrate", "--topology", "switch:8", "--from",
        file("dup_log.json", R"({"results": [], "results": []})")},
       R"(key "results" appears twice)"},
  });
}

TEST_CASE("numbers outside their declared range are refused naming the option and the range") {
  expect_all({
      // Sizes above 2^53 bytes: the byte counters stay exact (they overflowed to 0 near 2^63).
      {run({"--size", "9223372036854775807"}), "--size: invalid size '9223372036854775807'; out of range"},
      {run({"--size", "9007199254740993"}), "at most 2^53 bytes"},  // 2^53 + 1: read exactly, not rounded
      {sweep({"--sizes", "1:9223372036854775807:x2"}), "at most 2^53 bytes"},
      {matrix("huge_entry.json", "[[0, 1e17], [1, 0]]"), "is not a whole number of bytes"},
      // 2^53 + 1 as a JSON integer, refused as the same text is (a matrix in CSV, a --size).
      {matrix("huge_int_entry.json", "[[0, 9007199254740993], [1, 0]]"),
       "row 0, column 1: invalid size '9007199254740993'; out of range: at most 2^53 bytes"},
      {{"workload", file("huge_training.json", R"({"workload": "training", "topology": "switch:8", "stages":
           [{"name": "s", "collectives": [{"collective": "allreduce", "groups": "chips:0-7", "size": 9007199254740993}]}]})")},
       ".size: invalid size '9007199254740993'; out of range: at most 2^53 bytes"},
      // The same as a string names its field too (it said only "invalid size").
      {{"workload",
        file("huge_training_text.json", R"({"workload": "training", "topology": "switch:8", "stages":
           [{"name": "s", "collectives": [{"collective": "allreduce", "groups": "chips:0-7", "size": "9000TiB"}]}]})")},
       "stages[0].collectives[0].size: invalid size '9000TiB'; out of range: at most 2^53 bytes"},
      // A tune row's bytes as a sweep never writes them.
      {tune("huge_bytes.jsonl",
            R"({"point": 0, "status": "ok", "topology": "switch:4", "collective": "allreduce", )"
            R"("algorithm": "ring", "bytes": 9007199254740993, "verified": true, "time_s": 1})"),
       "huge_bytes.jsonl:1: \"bytes\" 9007199254740993 is over 2^53"},
      {{"workload", file("huge_pingpong.json", R"({"workload": "pingpong", "topology": "switch:2",
           "size": 9007199254740993})")},
       "field 'size': invalid size '9007199254740993'; out of range: at most 2^53 bytes"},
      // A rate so small that every time is inf; a time past 1e6 s (a fault at @1e300 printed 63 digits).
      {run({"--size", "1", "--set", "link_bandwidth=1e-300"}), "out of range: 1kBps to 1e18Bps"},
      {run({"--size", "1", "--fault", "late-chip:0@1e300"}), "out of range: at most 1e6 s"},
      {run({"--size", "1", "--set", "link_latency=2e6s"}), "out of range: at most 1e6 s"},
      // Efficiencies are fractions; FLOP/s are positive; pipelines have at most 4096 chunks.
      {run({"--size", "1", "--set", "link_efficiency=2"}),
       "parameter link_efficiency: '2' is out of range; expected (0, 1]"},
      {run({"--size", "1", "--set", "link_efficiency=0"}), "expected (0, 1]"},
      {moe({"--set", "chip_flops=0"}), "parameter chip_flops: '0' is out of range; expected (0, 1e+18]"},
      {moe({"--set", "compute_efficiency=1.5"}), "parameter compute_efficiency: '1.5' is out of range"},
      {run({"--size", "1MiB", "--set", "pipeline_chunks=100000000"}),
       "parameter pipeline_chunks: '100000000' is out of range; expected [1, 4096]"},
      {sweep({"--sizes", "1KiB", "--set", "pipeline_chunks=2,5000"}), "expected [1, 4096]"},
  });
}

TEST_CASE("work too large for the machine is refused from the spec, before anything is built") {
  expect_all({
      // switch: and ring: built for ~18 s and 5.8 GB before running out of memory.
      {{"topology", "switch:100000000"},
       "switch:100000000 would have 1e+08 chips and 1e+08 links, over the limit"},
      {{"topology", "ring:100000000"}, "would have 1e+08 chips"},
      {{"topology", "switch:64", "--set", "planes=1000000"}, "would have 64 chips and 6.4e+07 links"},
      {run({"--size", "1"}, "mesh:100000"), "mesh:100000 would have 1e+05 chips and 4999950000 links"},
      // Every generator counts its chips from the spec the same way (check_topology_size).
      {{"topology", "fattree:102"}, "fattree:102 would have 265302 chips, over the limit of 262144 chips"},
      {{"topology", "cluster:2000:trn3"}, "cluster:2000:trn3 would have 288000 chips, over the limit"},
      {{"topology", "hgx-h100", "--set", "gpus=300000"}, "hgx-h100 would have 3e+05 chips, over the limit"},
      {{"topology", "trn3", "--set", "chips_per_server=999999999"}, "trn3 would have 35999999964 chips"},
      {{"topology", "trn3-gen1", "--set", "chips_per_server=999999999"},
       "trn3-gen1 would have 3999999996 chips"},
      {{"topology", "nvl72", "--set", "compute_trays=100000"},
       "nvl72 would have 4e+05 chips, over the limit"},
      {{"topology", "dragonfly", "--set", "routers_per_group=1000", "--set", "chips_per_router=1000"},
       "dragonfly would have 2.001e+09 chips, over the limit of 262144 chips"},
      // pipeline_chunks=4096 on 1152 chips: 1.1e10 messages, which ran past any time limit.
      {run({"--size", "1GiB", "--set", "pipeline_chunks=4096"}, "switch:1152"),
       "ring would post about 10871635968 messages (2 x 1152 chips x 4718592 chunks), over the limit of "
       "1e+08"},
      // A grid of 1e8 points allocated 2.4 GB before refusing, even with --shard picking one point.
      {sweep({"--sizes", "1:100000:+1", "--seeds", "0:999", "--shard", "0/100000000"}),
       "the sweep has 99900000 points (at most; --set values cross), over the limit of 100000"},
  });
}

TEST_CASE("messages name the option whose value is bad") {
  expect_all({
      {run({"--size", "1", "--groups", "blocks:0"}), "--groups blocks:0: invalid count '0'"},
      {run({"--size", "1", "--groups", "tp", "--layout", "tp=0"}), "--layout tp: invalid count '0'"},
      {{"moe", "--experts", "4", "--top-k", "1", "--tokens-per-chip", "2", "--hidden", "0"},
       "--hidden must be an integer between 1 and 16777216, not '0'"},
      {{"moe", "--experts", "4", "--top-k", "1", "--tokens-per-chip", "x", "--hidden", "8"},
       "--tokens-per-chip must be an integer between 1 and 1073741824, not 'x'"},
      {moe({"--zipf", "-1"}), "--zipf must be a number between 0 and 100, not '-1'"},
      {moe({"--seed", "x"}), "--seed must be a whole number"},
      {{"topology", "fattree:3"}, "e.g. fattree:2 or fattree:4"},  // read "fattree:4 or fattree:4"
      // A NUL byte in a quoted key cut the line short (what() is a C string): it shows as \x00.
      {sweep_file("nul_key.json", R"({"topologies": ["switch:4"], "bad\u0000key": 1})"), "bad\\x00key"},
      {{"calibrate", "--topology", "nvl72", "--from",
        std::string(ULTRASIM_SOURCE_DIR) + "/test/data/calibrate/gb200_nvl72_coreweave.log", "--hold-out",
        "x"},
       "--hold-out: invalid size 'x'"},
  });
}

TEST_CASE("an error every point of a sweep would hit is refused before the sweep starts") {
  // A fault naming no link ran every point as an error row and exited 0.
  expect_all({
      {sweep({"--sizes", "1KiB,2KiB", "--fault", "link-down:nolink@1us"}),
       "--fault on switch:4: invalid --fault"},
  });
}

TEST_CASE("an empty schedule and a training layout that does not divide the chips are bad input") {
  expect_all({
      {schedule("empty_steps.json", R"({"collective": "allreduce", "chips": 2, "chunks": 2, "steps": []})"),
       R"("steps" is empty: 2 chips need at least one transfer to allreduce)"},
      {{"workload", file("layout.json", R"({"workload": "training", "topology": "switch:8", "layout": "tp=3",
          "stages": [{"name": "s", "compute_s": 1e-6}]})")},
       "--layout 'tp=3': tp x ep x dp x pp"},
  });
}

TEST_CASE("inputs each in range but out of proportion are refused instead of printing inf or noise") {
  const std::string training =
      R"({"workload": "training", "topology": "switch:8", "layout": "tp=2", "stages": [)";
  expect_all({
      // 1e300 s of compute printed a 63-digit step time.
      {{"workload", file("long_stage.json", training + R"({"name": "s", "compute_s": 1e300}]})")},
       "stages[0].compute_s must be a time from 0 to 1e6 s"},
      {{"workload", file("many_flops.json", training + R"({"name": "s", "compute_flops": 1e300}]})")},
       "training stage 's' computes for 6.621639517944644e+284 s, over the limit of 1e6 s"},
      // chip_flops in range, but an expert FFN then takes 1.28e303 s: the layer time printed as inf.
      {moe({"--set", "chip_flops=1e-300"}),
       "the result's layer_time_s would be 1.28e+303 s, over the limit of 1e6 s"},
      {moe({"--set", "chip_flops=1e-10"}),
       "the result's layer_time_s would be 1.28e+13 s, over the limit of 1e6 s of a simulated time"},
      // 1 kB/s links under a 7.3 PB buffer: each in its range, together 1.3e13 s.
      {run({"--size", "8000TiB", "--set", "link_bandwidth=1kBps"}),
       "ring's time would be 13194139533312 s, over the limit of 1e6 s"},
  });
}

TEST_CASE("a number no double holds (1e309) is refused naming the file and the field, in every JSON reader") {
  const std::string huge = "1e309";
  expect_all({
      {matrix("huge_matrix.json", R"({"bytes": [[0, 1e309], [1, 0]]})"), "field \"bytes\" is out of range"},
      {sweep_file("huge_sweep.json", sweep_json(R"("sizes": [1e309])")), "field \"sizes\" is out of range"},
      {schedule("huge_schedule.json", R"({"collective": "allreduce", "chips": 1e309})"),
       "field \"chips\" is out of range"},
      {topology_file("huge_topology.json", two_chips(R"("raw_bandwidth_GBps": 1e309)")),
       "field \"raw_bandwidth_GBps\" is out of range"},
      {{"workload", file("huge_moe.json", R"({"workload": "moe", "experts": 1e309})")},
       "field \"experts\" is out of range"},
      {{"workload",
        file("huge_serving.json", R"({"workload": "serving", "model": "llama3-70b", "tp": 1e309})")},
       "huge_serving.json': field \"tp\" is out of range"},
      {{"serve", "--model-file", file("huge_model.json", R"({"layers": 1e309})")},
       "model file '" + temp_path("huge_model.json") +
           "': field \"layers\" is out of range (number overflow "
           "parsing '1e309'); expected a finite number"},
      {{"serve", "--lengths", file("huge_lengths.json", "[[1e309, 1]]")}, "out of range"},
      {{"serve", "--requests", file("huge_requests.jsonl", R"({"arrival": 1e309, "input": 1, "output": 1})")},
       "field \"arrival\" is out of range"},
      {tune("huge_rows.jsonl", R"({"point": 1e309})"), "field \"point\" is out of range"},
      {run({"--size", "1", "--stack", file("huge_stack.json", R"({"name": "x", "efficiency": 1e309})")}),
       "field \"efficiency\" is out of range"},
      {{"calibrate", "--topology", "switch:8", "--from", file("huge_log.json", R"({"results": [1e309]})")},
       "field \"results\" is out of range"},
  });
}

TEST_CASE("two options that say one thing are refused together, never resolved in silence") {
  const std::string model =
      file("conflict_model.json", R"({"layers": 2, "hidden": 64, "vocab": 100, "heads": 4})");
  const std::string lengths = file("conflict_lengths.csv", "16,4\n");
  const std::string load = file("conflict_load.json", "[1, 2, 3, 4, 5, 6, 7, 8]");
  const std::vector<std::string> moe{"moe", "--topology",        "switch:8", "--experts", "8", "--top-k",
                                     "2",   "--tokens-per-chip", "16",       "--hidden",  "64"};
  auto with = [](std::vector<std::string> args, const std::vector<std::string>& extra) {
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  expect_all({
      {{"serve", "--model", "llama3-70b", "--model-file", model},
       "--model and --model-file are mutually exclusive; give one"},
      {{"serve", "--lengths", lengths, "--input-len", "16"},
       "--input-len and --lengths are mutually exclusive; give one"},
      {{"serve", "--lengths", lengths, "--output-len", "4"},
       "--output-len and --lengths are mutually exclusive"},
      {{"serve", "--expert-load", load, "--zipf", "1.2"}, "--zipf and --expert-load are mutually exclusive"},
      {with(moe, {"--expert-load", load, "--zipf", "1.2"}),
       "--expert-load and --zipf are mutually exclusive"},
      {run({"--size", "1KiB", "--set", "stack=nccl", "--stack", "ideal"}),
       "--set stack is given twice (nccl, then ideal); give it once (--stack NAME is --set stack=NAME)"},
      {run({"--size", "1KiB", "--set", "link_latency=1us", "--set", "link_latency=2us"}),
       "--set link_latency is given twice (1us, then 2us); give it once"},
      {{"serve", "--set", "price_per_chip_hour=1", "--set", "price_per_chip_hour=2"},
       "--set price_per_chip_hour is given twice"},
      {{"workload",
        file("conflict_serving.json", R"({"workload": "serving", "model": "llama3-70b", "lengths": ")" +
                                          lengths + R"(", "input_len": 16})")},
       "fields 'lengths' and 'input_len' are exclusive: the lengths file gives each request's"},
      {{"workload",
        file("conflict_serving2.json", R"({"workload": "serving", "model": "deepseek-v3", "zipf": 1, )"
                                       R"("expert_load": ")" +
                                           load + R"("})")},
       "fields 'expert_load' and 'zipf' are exclusive: a measured load replaces the Zipf popularity"},
      {{"workload",
        file("conflict_moe.json", R"({"workload": "moe", "experts": 8, "top_k": 2, "tokens_per_chip": 16, )"
                                  R"("hidden": 64, "zipf": 1, "expert_load": [1, 2, 3, 4, 5, 6, 7, 8]})")},
       "fields 'expert_load' and 'zipf' are exclusive"},
  });
}

TEST_CASE("serving parameters that make no sense are refused, naming the option and the limit") {
  expect_all({
      {{"serve", "--topology", "switch:128", "--model", "llama3-70b", "--tp", "128"},
       "--tp 128 is above the model's 64 attention heads"},
      {{"serve", "--replicate-hot", "300"}, "--replicate-hot 300 is above the model's 256 routed experts"},
      {{"serve", "--model", "llama3-70b", "--replicate-hot", "1"},
       "--replicate-hot 1 is above the model's 0 routed experts"},
      {{"serve", "--output-len", "0", "--tpot-target", "50ms"},
       "--tpot-target needs decode steps; --output-len 0 generates no token after the first"},
      {{"serve", "--phase", "prefill", "--tpot-target", "50ms"},
       "--tpot-target needs decode steps; --phase prefill runs none"},
  });
}

TEST_CASE("empty list items, chips listed twice and empty values are refused, never skipped") {
  expect_all({
      {sweep({"--sizes", "1KiB,,2KiB"}), "--sizes: '1KiB,,2KiB' has an empty item"},
      {sweep({"--sizes", "1KiB,"}), "--sizes: '1KiB,' has an empty item"},
      {{"sweep", "--topology", "switch:4,", "--collective", "allreduce", "--sizes", "1KiB"},
       "'switch:4,' has an empty item"},
      {{"serve", "--batch", "1,,8"}, "--batch: '1,,8' has an empty item"},
      {{"calibrate", "--topology", "switch:8", "--from",
        file("empty_item.log", "1024 256 float sum -1 1.0 1 1 0\n"), "--hold-out", ",1KiB"},
       "',1KiB' has an empty item"},
      {run({"--size", "1KiB"}, "switch:8@0,0,1"),
       "topology switch:8@0,0,1: chip 0 is listed twice in '0,0,1'"},
      {run({"--size", "1KiB"}, "switch:8@0-3,2-5"), "chip 2 is listed twice in '0-3,2-5'"},
      {run({"--size", "1KiB", "--trace", "t.json", "--trace-chips", "1,1"}),
       "--trace-chips: chip 1 is listed twice"},
      {run({"--size", "1KiB", "--trace", ""}), "--trace is given an empty value"},
      {run({"--size", "1KiB", "--out="}), "--out is given an empty value"},
      {{"topology", ""}, "argument 2 is empty; expected a command, an option or a value"},
  });
}

TEST_CASE("a name read from a file shows escaped in tables, as in errors, and whole in JSON") {
  // An escape sequence in a model's name would clear the terminal that shows the table.
  const std::string model =
      file("escape_model.json", R"({"name": "evil\u001b[2J", "layers": 2, "hidden": 64, )"
                                R"("vocab": 100, "heads": 4, "ffn": 128})");
  const std::vector<std::string> serve{"serve", "--topology", "switch:8", "--model-file", model, "--tp", "4"};
  const CliResult table = run_cli(serve);
  REQUIRE(table.status == 0);
  CHECK(table.out.find('\x1b') == std::string::npos);
  CHECK_THAT(table.out, Catch::StartsWith("# Serving evil\\x1b[2J on switch:8"));
  auto json_args = serve;
  json_args.insert(json_args.end(), {"--format", "json"});
  const CliResult json = run_cli(json_args);
  REQUIRE(json.status == 0);
  CHECK(nlohmann::json::parse(json.out)["model"]["name"] == "evil\x1b[2J");
}

TEST_CASE("expert loads whose sum overflows are refused, from a file or inline, not shared out as zeros") {
  const std::string huge = file("overflow_load.json", "[1e308, 1e308, 1, 1]");
  expect_all({
      {{"serve", "--topology", "switch:4", "--model-file",
        file("overflow_model.json", R"({"layers": 2, "hidden": 64, "vocab": 100, "heads": 4, "ffn": 64, )"
                                    R"("experts": 4, "top_k": 2, "expert_ffn": 32})"),
        "--expert-load", huge},
       "expert load '" + huge + "': the loads add up past the largest number (1.8e308)"},
      {{"moe", "--topology", "switch:4", "--experts", "4", "--top-k", "2", "--tokens-per-chip", "16",
        "--hidden", "64", "--expert-load", huge},
       "the loads add up past the largest number"},
      {{"workload", file("overflow_moe.json",
                         R"({"workload": "moe", "experts": 4, "top_k": 2, )"
                         R"("tokens_per_chip": 16, "hidden": 64, "expert_load": [1e308, 1e308, 1, 1]})")},
       "field 'expert_load': the loads add up past the largest number"},
  });
}
