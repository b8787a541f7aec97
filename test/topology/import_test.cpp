// file:PATH imports the project's JSON export exactly, reads GraphML, and rejects bad files with one
// line that names the file, the element and what was expected.
#include <catch2/catch.hpp>
#include <fstream>

#include "cli_runner.hpp"
#include "topology/base/errors.hpp"
#include "topology/export.hpp"
#include "topology/registry.hpp"

using namespace ultrasim;
using namespace ultrasim::test;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string exported(const Topology& t) {
  Routes routes(t);
  return topology_json(t, routes).dump(2) + "\n";
}

// The spec each generator builds with its defaults.
const char* kGraphml = R"(<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="k" for="node" attr.name="kind" attr.type="string"><default>chip</default></key>
  <key id="r" for="node" attr.name="rank" attr.type="int"/>
  <key id="s" for="node" attr.name="server" attr.type="int"/>
  <key id="sl" for="node" attr.name="latency" attr.type="string"/>
  <key id="t" for="edge" attr.name="tier" attr.type="string"/>
  <key id="bw" for="edge" attr.name="bandwidth" attr.type="string"/>
  <key id="ef" for="edge" attr.name="efficiency" attr.type="string"/>
  <key id="la" for="edge" attr.name="latency" attr.type="string"><default>1us</default></key>
  <key id="ln" for="edge" attr.name="lanes" attr.type="int"/>
  <key id="x" for="node" attr.name="x" attr.type="double"/>
  <key id="tiers" for="graph" attr.name="tiers" attr.type="string"/>
  <key id="fw" for="graph" attr.name="chip_forwarding" attr.type="boolean"/>
  <graph id="G" edgedefault="undirected">
    <data key="tiers">board, spine</data>
    <data key="fw">false</data>
    <node id="sw"><data key="k">switch</data><data key="sl">200ns</data></node>
    <node id="a"><data key="r">1</data><data key="s">0</data><data key="x">1.5</data></node>
    <node id="b"><data key="r">0</data><data key="s">0</data></node>
    <node id="c"><data key="r">2</data><data key="s">1</data></node>
    <edge source="a" target="sw"><data key="t">spine</data><data key="bw">100GBps</data><data key="ln">4</data></edge>
    <edge source="b" target="sw"><data key="t">spine</data><data key="bw">100GBps</data><data key="ln">4</data></edge>
    <edge source="c" target="sw"><data key="t">spine</data><data key="bw">100GBps</data><data key="ln">4</data></edge>
    <edge source="a" target="b"><data key="t">board</data><data key="bw">64GBps</data><data key="ef">60/64</data><data key="la">250ns</data></edge>
  </graph>
</graphml>
)";

}  // namespace

TEST_CASE("every generator's JSON export imports into the same topology and exports byte-identically",
          "[import]") {
  for (const GeneratorEntry& entry : topology_generators()) {
    if (entry.name == "file") continue;
    const std::string spec = entry.example_spec();
    INFO(spec);
    Topology original = make_topology(spec, {}, {});
    std::string first = exported(original);
    std::string path = write_temp("roundtrip-" + entry.name + ".json", first);
    Topology imported = make_topology("file:" + path, {}, {});
    CHECK(exported(imported) == first);
    CHECK(imported.chip_count() == original.chip_count());
    CHECK(imported.tiers() == original.tiers());
    CHECK(imported.chip_forwarding() == original.chip_forwarding());
    CHECK(imported.multipath_default() == original.multipath_default());
    REQUIRE(imported.links().size() == original.links().size());
    for (std::size_t i = 0; i < original.links().size(); ++i) {
      const Link &a = original.links()[i], &b = imported.links()[i];
      CHECK(a.name == b.name);
      CHECK(a.raw_bandwidth == b.raw_bandwidth);  // exact, not within a tolerance
      CHECK(a.bandwidth() == b.bandwidth());
      CHECK(a.latency == b.latency);
      CHECK(a.lanes == b.lanes);
      CHECK(a.tier_index == b.tier_index);
    }
  }
}

TEST_CASE("a round trip keeps rates that are not whole GB/s, flags, lanes and server/rack levels exactly",
          "[import]") {
  Topology t("hand", ParamSet{}, {"fast", "slow"});
  Vertex s = t.add_switch("hub", 3.3e-7);
  Vertex a = t.add_chip(0, 0), b = t.add_chip(1, 0);
  t.add_link(a, s, "slow", 123456789.123, 1.7e-7, 0.9375, 3);
  t.add_link(b, s, "slow", 1e11 / 3, 2e-7, 0.95);
  t.add_link(a, b, "fast", 3e11, 1e-7);
  t.set_chip_forwarding(false);
  t.set_multipath_default("stripe");
  std::string first = exported(t);
  Topology imported = make_topology("file:" + write_temp("hand.json", first), {}, {});
  CHECK(exported(imported) == first);
  CHECK(imported.links()[0].raw_bandwidth == 123456789.123);
  CHECK(imported.links()[1].raw_bandwidth == 1e11 / 3);
  CHECK(imported.links()[0].lanes == 3);
  CHECK(imported.node(imported.chip(1)).server == 1);
  CHECK(imported.node(imported.switches()[0]).latency == 3.3e-7);
  CHECK_FALSE(imported.chip_forwarding());
  CHECK(imported.multipath_default() == "stripe");
  CHECK(imported.tiers() == std::vector<std::string>{"fast", "slow"});
}

TEST_CASE("an imported export keeps the switch parameters it records, --set still overrides them",
          "[import]") {
  Topology reducing = make_topology("switch:4", {}, {{"switch_reduction", "true"}});
  std::string path = write_temp("reducing.json", exported(reducing));
  CHECK(make_topology("file:" + path, {}, {}).params().flag("switch_reduction"));
  CHECK_FALSE(
      make_topology("file:" + path, {}, {{"switch_reduction", "false"}}).params().flag("switch_reduction"));
  CHECK_THROWS_WITH(make_topology("file:" + path, {}, {{"server_bandwidth", "1GBps"}}),
                    Catch::Contains("unknown parameter 'server_bandwidth'"));
}

TEST_CASE("a hand-written GraphML file imports with its keys, units and defaults", "[import]") {
  Topology t = make_topology("file:" + write_temp("small.graphml", kGraphml), {}, {});
  CHECK(t.chip_count() == 3);
  CHECK(t.switch_count() == 1);
  CHECK(t.tiers() == std::vector<std::string>{"board", "spine"});
  CHECK_FALSE(t.chip_forwarding());
  CHECK(t.multipath_default() == "single");
  // Vertices keep the file order; the chip with rank 0 ("b") takes the first chip position.
  CHECK(t.node(1).name == "chip0");
  CHECK(t.node(t.switches()[0]).name == "sw");
  CHECK(t.node(t.switches()[0]).latency == Approx(200e-9).epsilon(1e-15));
  const Link& spine = t.links()[0];  // a (rank 1) -- sw
  CHECK(spine.tier == "spine");
  CHECK(spine.raw_bandwidth == 100e9);
  CHECK(spine.efficiency == 1);
  CHECK(spine.latency == 1e-6);  // the key's default
  CHECK(spine.lanes == 4);
  CHECK(t.node(spine.a).rank == 1);
  const Link& board = t.links()[3];
  CHECK(board.tier == "board");
  CHECK(board.bandwidth() == 60e9);
  CHECK(board.latency == 250e-9);
  CHECK(board.lanes == 1);
  CHECK(t.node(t.chip(2)).server == 1);
  CHECK(t.node(t.chip(2)).rack == -1);
}

TEST_CASE("bad topology files are one-line input errors naming the file, the element and what was expected",
          "[import]") {
  const std::string node_chip = R"({"name": "c0", "kind": "chip"})";
  auto json = [](const std::string& nodes, const std::string& links) {
    return R"({"nodes": [)" + nodes + R"(], "links": [)" + links + "]}";
  };
  const std::string two_chips = R"({"name": "c0"}, {"name": "c1"})";
  const std::string ok_link = R"({"a": "c0", "b": "c1", "raw_bandwidth_Bps": 1e11})";
  struct Case {
    std::string file, text, fragment;
  };
  std::vector<Case> cases{
      {"bad.json", R"({"nodes": [)", "bad.json: JSON: not valid JSON"},
      {"unknown-node.json", json(two_chips, R"({"a": "c0", "b": "c9", "raw_bandwidth_Bps": 1e11})"),
       "links[0] (c0 -- c9): unknown node 'c9'"},
      {"dup-rank.json", json(R"({"name": "c0", "rank": 0}, {"name": "c1", "rank": 0})", ok_link),
       "nodes[1] 'c1': duplicate rank 0 (also nodes[0] 'c0')"},
      {"rank-range.json", json(R"({"name": "c0", "rank": 0}, {"name": "c1", "rank": 2})", ok_link),
       "nodes[1] 'c1': rank 2 is out of range; expected 0..1"},
      {"some-ranks.json", json(R"({"name": "c0", "rank": 1}, {"name": "c1"})", ok_link),
       "nodes[1] 'c1': no rank while other chips have one"},
      {"disconnected.json", json(two_chips + R"(, {"name": "c2"})", ok_link), "is disconnected: chip2"},
      {"units.json", json(two_chips, R"({"a": "c0", "b": "c1", "raw_bandwidth_Bps": "100 parsecs"})"),
       "links[0] (c0 -- c1): raw_bandwidth_Bps: invalid bandwidth '100 parsecs'"},
      {"no-rate.json", json(two_chips, R"({"a": "c0", "b": "c1"})"),
       "links[0] (c0 -- c1): no raw_bandwidth_Bps"},
      {"gbps-text.json",
       json(two_chips,
            R"({"a": "c0", "b": "c1", "raw_bandwidth_Bps": 1e11, "raw_bandwidth_GBps": "100GBps"})"),
       "links[0] (c0 -- c1): raw_bandwidth_GBps: expected a number of GB/s, got \"100GBps\""},
      {"disagree.json",
       json(two_chips, R"({"a": "c0", "b": "c1", "raw_bandwidth_Bps": 1e11, "raw_bandwidth_GBps": 90})"),
       "raw_bandwidth_Bps and raw_bandwidth_GBps disagree"},
      {"typo.json", json(two_chips, R"({"a": "c0", "b": "c1", "raw_bandwidth_Bps": 1e11, "lanse": 2})"),
       "unknown field 'lanse'; did you mean 'lanes'?"},
      {"kind.json", json(R"({"name": "c0", "kind": "swich"}, {"name": "c1"})", ok_link),
       "nodes[0] 'c0': unknown kind 'swich'; did you mean 'switch'?"},
      {"dup-name.json", json(R"({"name": "c0"}, {"name": "c0"})", ok_link),
       "nodes[1] 'c0': duplicate name 'c0'"},
      {"efficiency.json",
       json(two_chips, R"({"a": "c0", "b": "c1", "raw_bandwidth_Bps": 1e11, "efficiency": 1.5})"),
       "links[0] (c0 -- c1): link chip0-chip1: efficiency must be in (0, 1]"},
      {"tier.json",
       R"({"tiers": ["server"], "nodes": [)" + two_chips +
           R"(], "links": [{"a": "c0", "b": "c1", "tier": "sever", "raw_bandwidth_Bps": 1e11}]})",
       "unknown tier 'sever'; did you mean 'server'?"},
      {"no-chips.json", json(R"({"name": "s", "kind": "switch"})", ""), "has no chips"},
      {"self.json", json(node_chip, R"({"a": "c0", "b": "c0", "raw_bandwidth_Bps": 1e11})"),
       "links[0] (c0 -- c0): link from chip0 to itself"},
      {"multipath.json", R"({"multipath_default": "sprinkle", "nodes": [)" + node_chip + "]}",
       "multipath_default: unknown policy 'sprinkle'"},
      {"bad.txt", "hello", "bad.txt: neither JSON (an object) nor GraphML"},
      {"bad.graphml", "<graphml><graph edgedefault=\"undirected\"><node id=\"a\"/>",
       "bad.graphml: GraphML: not valid GraphML"},
      {"edge.graphml",
       R"(<graphml><key id="bw" for="edge" attr.name="bandwidth" attr.type="string"/><graph edgedefault="undirected"><node id="a"/><edge id="e0" source="a" target="z"><data key="bw">1GBps</data></edge></graph></graphml>)",
       "edge 'e0' (a -- z): unknown node 'z'"},
      {"units.graphml",
       R"(<graphml><key id="bw" for="edge" attr.name="bandwidth" attr.type="string"/><graph edgedefault="undirected"><node id="a"/><node id="b"/><edge source="a" target="b"><data key="bw">fast</data></edge></graph></graphml>)",
       "edge #0 (a -- b): bandwidth: invalid bandwidth 'fast'"},
      {"directed.graphml",
       R"(<graphml><graph edgedefault="directed"><node id="a"/><node id="b"/><edge source="a" target="b"/></graph></graphml>)",
       "directed edges"},
  };
  for (const Case& c : cases) {
    std::string path = write_temp(c.file, c.text);
    INFO(c.file);
    expect_input_error({"topology", "file:" + path}, c.fragment);
    CliResult r = run_cli({"topology", "file:" + path});
    CHECK_THAT(r.err, Catch::Contains(path));
  }
  expect_input_error({"topology", "file:/nonexistent/fabric.json"},
                     "cannot read topology file '/nonexistent/fabric.json'");
  expect_input_error({"topology", "file:"}, "file: needs a path");
}
