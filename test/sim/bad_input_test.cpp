// Bad input, end to end: every parser and input path (units, topology specs, --set, run and sweep options,
// sweep files, traffic matrices, schedules, topology files, tune rows, platforms, SimGrid settings, the
// memory guard) rejects a bad value with exit status 2 and one "ultrasim: error: " line naming it. Each
// table is one TEST_CASE (one CTest process); every row is a subprocess, none of them simulates.
#include <stdlib.h>

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
      {run({"--size", "99999999999999999999"}), "expected a whole number of bytes"},
      {run({"--size", "1.5"}), "invalid size '1.5'; expected a whole number of bytes"},
      {run({"--size", "1KiBx"}), "expected a byte count such as 4096, 64MiB or 1GB"},
      {run({"--size", "0x10"}), "invalid size '0x10'"},
      {run({"--size", " 4"}), "invalid size ' 4'"},
      {run({"--size", ""}), "--size is required"},
      {run({"--size", "1KiB", "--set", "link_bandwidth=1e308TBps"}),
       "invalid bandwidth '1e308TBps'; out of range"},
      {run({"--size", "1KiB", "--set", "link_bandwidth=0"}), "expected a positive rate"},
      {run({"--size", "1KiB", "--set", "link_bandwidth=-1GBps"}), "invalid bandwidth '-1GBps'"},
      {run({"--size", "1KiB", "--set", "link_latency=-1ns"}), "invalid time '-1ns'"},
      {run({"--size", "1KiB", "--set", "link_latency=1e999s"}), "invalid time '1e999s'"},
      {run({"--size", "1KiB", "--set", "link_efficiency=1/0"}), "the denominator must be > 0"},
      {run({"--size", "1KiB", "--set", "link_efficiency=1e300/1e-300"}), "out of range"},
      {run({"--size", "1KiB", "--set", "link_efficiency=2"}), "efficiency must be in (0, 1], got 2"},
  });
}

TEST_CASE("bad topology specs name the spec and the expected shape") {
  expect_all({
      {{"topology", ""}, "unknown topology ''"},
      {{"topology", "swich:4"}, "did you mean 'switch'"},
      {{"topology", "switch"}, "needs a chip count, e.g. switch:16"},
      {{"topology", "switch:0"}, "invalid count '0'; expected a positive integer"},
      {{"topology", "switch:-1"}, "invalid count '-1'"},
      {{"topology", "switch:99999999999999999999"}, "invalid count '99999999999999999999'"},
      {{"topology", "switch:4x"}, "invalid count '4x'"},
      {{"topology", "torus:0x4"}, "invalid torus dimensions '0x4'"},
      {{"topology", "torus:4xx4"}, "expected positive sizes such as 4x4x4"},
      {{"topology", "torus:2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2"}, "more than 1048576 chips"},
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
      {{}, "expected a command: list, topology, run, sweep, tune, calibrate, moe or workload"},
      {{"run", "--topology", "switch:4"}, "--collective is required"},
      {run({"--size", "1KiB", "--size", "2KiB"}), "--size"},
      {run({"--size", "1KiB", "--bogus"}), "--bogus"},
      {run({"--size", "1KiB", "--format", "xml"}), "unknown format 'xml'; known: table, json, csv"},
      {run({"--size", "1KiB", "--engine", "fast"}), "unknown engine 'fast'"},
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
      {sweep({"--sizes", ","}), "lists no size"},
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
      {sweep({"--sizes", "1", "--out", "/nonexistent/dir/o"}), "cannot write '/nonexistent/dir/o'"},
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
      {matrix("m8.json", "[[0,18446744073709551615],[18446744073709551615,0]]"), "more than 2^64 bytes"},
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
      {schedule("x5.json", R"({"collective": "allreduce", "chips": 4, "chunks": 1, "steps": []})"),
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
      {tune("r2.jsonl", "{" + kOkRow + R"(, "time_s": 1e400})"), "r2.jsonl:1: not JSON"},  // was internal
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
      {run({"--size", "1", "--simgrid-cfg", "network/model:bogus"}), "unknown value 'bogus'"},  // aborted
      {run({"--size", "1", "--simgrid-cfg", "network/optim:x"}), "network/optim"},              // aborted
      {run({"--size", "1", "--simgrid-cfg", "surf/precision:0"}), "expected a precision > 0"},  // hung
      {run({"--size", "1", "--simgrid-cfg", "contexts/stack-size:0"}), "at least 16"},          // crashed
      {run({"--size", "1", "--simgrid-cfg", "foo:bar"}), "Bad config key: foo"},  // one line, not 100
      {run({"--size", "1", "--simgrid-cfg", "nocolon"}), "expected name:value"},
  });
}

TEST_CASE("the memory guard refuses a configuration that would not fit, saying how much it needs") {
  unsetenv("ULTRASIM_MEMORY_LIMIT");
  // Routes for 1e12 chip pairs: no machine has that; this used to end in std::bad_alloc (exit 1).
  expect_input_error({"topology", "switch:1000000"}, "of memory (1000000 chips");
  expect_input_error(run({"--size", "1"}, "torus:1000x1000"), "routes of 999999000000 chip pairs");
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
  // Per flow in flight, SimGrid needs 2048 B and the flow engine 768 B (workloads/memory_guard.hpp): a
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
  expect_input_error(on_simgrid, "this run on switch:256 in SimGrid needs an estimated 0.3 GiB of memory");
  expect_input_error(on_simgrid, "65280 flows in flight x 2048 B in SimGrid");
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
