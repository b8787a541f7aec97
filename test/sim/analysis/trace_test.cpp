// Traces (--trace) and flow records (--flows). A trace is well formed Chrome Trace Event JSON as Perfetto
// reads it: every complete event has ts, dur, pid and tid, no two on one track overlap without nesting,
// every flow arrow has both ends; its counters integrate to the bytes each tier carried; the options that
// bound its size keep exactly what they say. Flow records carry each flow's links, whose bytes x hops add
// up to the run's link bytes.
#include <catch2/catch.hpp>

#include <zlib.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "cli_runner.hpp"

using namespace ultrasim::test;
using nlohmann::json;

namespace {

struct Traced {
  json run, trace;
};

// Runs `args` (a `run` without --format) with --format json and --trace; returns both documents.
Traced traced_run(std::vector<std::string> args, const std::string& name) {
  const std::string path = temp_path(name);
  args.insert(args.begin(), "run");
  args.insert(args.end(), {"--format", "json", "--trace", path});
  CliResult r = run_cli(args);
  REQUIRE(r.status == 0);
  return {json::parse(r.out), json::parse(read_file(path))};
}

std::string gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  std::string out;
  char buffer[1 << 16];
  for (int n; (n = gzread(f, buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<std::size_t>(n));
  gzclose(f);
  return out;
}

// What Perfetto needs of a Chrome trace, checked event by event; returns the complete events per track.
std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> check_structure(const json& trace) {
  REQUIRE(trace["traceEvents"].is_array());
  std::set<int> named;
  std::map<long long, std::multiset<std::string>> arrows;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
  for (const auto& e : trace["traceEvents"]) {
    REQUIRE(e.contains("ph"));
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "process_name") named.insert(e["pid"].get<int>());
    if (ph == "X") {
      for (const char* field : {"ts", "dur", "pid", "tid"}) REQUIRE(e.contains(field));
      REQUIRE(e["ts"].is_number());
      REQUIRE(e["dur"].get<double>() >= 0);
      tracks[{e["pid"], e["tid"]}].emplace_back(e["ts"].get<double>(),
                                                e["ts"].get<double>() + e["dur"].get<double>());
    }
    if (ph == "s" || ph == "f") arrows[e["id"].get<long long>()].insert(ph);
    if (ph == "C") {
      const double util = e["args"]["util"];
      CHECK(util >= 0);
      CHECK(util <= 1 + 1e-9);
    }
  }
  int overlaps = 0;
  for (auto& [track, slices] : tracks) {
    CHECK(named.count(track.first) == 1);
    std::sort(slices.begin(), slices.end());
    for (std::size_t i = 1; i < slices.size(); ++i) {
      const bool disjoint = slices[i].first >= slices[i - 1].second;
      const bool nested = slices[i].second <= slices[i - 1].second;
      if (!disjoint && !nested) ++overlaps;
    }
  }
  CHECK(overlaps == 0);
  for (const auto& [id, ends] : arrows) CHECK(ends == std::multiset<std::string>{"f", "s"});
  return tracks;
}

std::vector<json> events_of(const json& trace, const std::string& ph, const std::string& cat = "") {
  std::vector<json> out;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
  return out;
}

}  // namespace

TEST_CASE("trn3 traces of a ring all-reduce and a direct all-to-all are Chrome traces Perfetto reads") {
  for (const char* algorithm : {"ring", "direct"}) {
    INFO(algorithm);
    const std::string collective = std::string(algorithm) == "ring" ? "allreduce" : "alltoall";
    Traced t = traced_run(
        {"--topology", "trn3", "--collective", collective, "--algorithm", algorithm, "--size", "1MiB"},
        std::string("trn3-") + algorithm + ".json");
    check_structure(t.trace);
    // One send and one receive event per flow, joined by an arrow; their bytes are the run's.
    const auto sends = events_of(t.trace, "X", "transfer"), receives = events_of(t.trace, "X", "receive");
    CHECK(sends.size() == t.run["transfers"].get<std::size_t>());
    CHECK(receives.size() == sends.size());
    CHECK(events_of(t.trace, "s").size() == sends.size());
    std::uint64_t bytes = 0;
    for (const auto& e : sends) {
      bytes += e["args"]["bytes"].get<std::uint64_t>();
      CHECK(e["pid"] == e["args"]["src"]);
      CHECK(e["ts"].get<double>() + e["dur"].get<double>() <=
            t.run["time_s"].get<double>() * 1e6 * (1 + 1e-12));
    }
    CHECK(bytes == t.run["bytes_sent"].get<std::uint64_t>());
    for (const auto& e : receives) CHECK(e["pid"] == e["args"]["dst"]);
    // 144 chips, 6 switches (4 server, 2 rack) and the fabric's counters are named processes.
    CHECK(events_of(t.trace, "M").size() > 144 + 6 + 1);
    CHECK(t.trace["otherData"]["algorithm"] == algorithm);
    CHECK(t.trace["otherData"]["trace"]["aggregate"] == "none");
  }
}

TEST_CASE("a tier's utilisation counter integrates to the bytes its links carried") {
  Traced t =
      traced_run({"--topology", "trn3", "--collective", "allreduce", "--algorithm", "ring", "--size", "4MiB"},
                 "counters.json");
  std::map<std::string, std::vector<std::pair<double, double>>> series;  // name -> (ts µs, util)
  for (const auto& e : events_of(t.trace, "C")) series[e["name"]].emplace_back(e["ts"], e["args"]["util"]);
  const double end_us = t.run["time_s"].get<double>() * 1e6;
  int tiers = 0;
  for (const auto& tier : t.run["links"]["tiers"]) {
    const std::string name = "tier " + tier["tier"].get<std::string>();
    REQUIRE(series.count(name) == 1);
    const auto& points = series[name];
    double integral = 0;  // utilisation x µs
    for (std::size_t i = 0; i < points.size(); ++i)
      integral +=
          points[i].second * ((i + 1 < points.size() ? points[i + 1].first : end_us) - points[i].first);
    const double bytes = integral * 1e-6 * tier["capacity_GBps"].get<double>() * 1e9;
    CHECK(bytes == Approx(tier["bytes"].get<double>()).epsilon(1e-9));
    ++tiers;
  }
  CHECK(tiers == 3);  // server, rack and cross-rack links
  // The hottest links have their own counter, named by direction.
  for (const auto& hot : t.run["links"]["hot"])
    CHECK(series.count("link " + hot["direction"].get<std::string>()) == 1);
}

TEST_CASE("flow records name each flow's links, their bytes x hops are the run's link bytes") {
  const std::string flows = temp_path("flows.jsonl");
  auto run = run_json({"--topology", "trn3", "--collective", "alltoall", "--algorithm", "direct", "--size",
                       "1MiB", "--flows", flows});
  std::istringstream in(read_file(flows));
  std::uint64_t lines = 0, bytes = 0, link_bytes = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const json f = json::parse(line);
    for (const char* field : {"src", "dst", "bytes", "step", "path", "start_s", "wire_end_s", "end_s",
                              "epoch", "cancelled", "links", "bottleneck"})
      REQUIRE(f.contains(field));
    const auto& links = f["links"];
    // chipS -> its server switch [-> rack switch ...] -> chipD: the route's directions, in order.
    REQUIRE(!links.empty());
    CHECK(links.front().get<std::string>().rfind("chip" + std::to_string(f["src"].get<int>()) + "->", 0) ==
          0);
    const std::string last = links.back();
    CHECK(last.substr(last.size() - 4 - std::to_string(f["dst"].get<int>()).size()) ==
          "chip" + std::to_string(f["dst"].get<int>()));
    CHECK(std::find(links.begin(), links.end(), f["bottleneck"]) != links.end());
    CHECK(f["start_s"].get<double>() <= f["wire_end_s"].get<double>());
    CHECK(f["wire_end_s"].get<double>() <= f["end_s"].get<double>());
    bytes += f["bytes"].get<std::uint64_t>();
    link_bytes += f["bytes"].get<std::uint64_t>() * links.size();
  }
  CHECK(lines == 144 * 143);
  CHECK(bytes == run["bytes_sent"].get<std::uint64_t>());
  CHECK(link_bytes == run["links"]["link_bytes"].get<std::uint64_t>());
}

TEST_CASE("in-switch reduction legs go between a chip and its switch's process") {
  Traced t = traced_run({"--topology", "switch:8", "--collective", "allreduce", "--algorithm",
                         "switch-reduce", "--size", "1MiB", "--set", "switch_reduction=true"},
                        "switch-reduce.json");
  check_structure(t.trace);
  int uploads = 0, downloads = 0;
  for (const auto& e : events_of(t.trace, "X", "transfer")) {
    CHECK(e["args"]["switch"] == "switch0");
    if (e["args"]["dst"] == -1) {
      ++uploads;
      CHECK(e["pid"] == e["args"]["src"]);
    }
    if (e["args"]["src"] == -1) {
      ++downloads;
      CHECK(e["pid"] == 8);  // the switch: pid 8, after the chips
    }
  }
  CHECK(uploads == t.run["transfers"].get<int>());  // a reduction's messages are its uploads
  CHECK(downloads == uploads);
}

TEST_CASE("aggregation, chosen chips, a time window and gzip bound a trace's size") {
  const std::vector<std::string> a2a{"--topology",  "switch:8", "--collective", "alltoall",
                                     "--algorithm", "direct",   "--size",       "8MiB"};
  SECTION("--trace-aggregate step: one event per chip, step and side, with the step's bytes") {
    auto args = a2a;
    args.insert(args.end(), {"--trace-aggregate", "step"});
    Traced t = traced_run(args, "aggregate.json");
    check_structure(t.trace);
    const auto sends = events_of(t.trace, "X", "transfer");
    CHECK(sends.size() == 8);
    CHECK(events_of(t.trace, "X", "receive").size() == 8);
    CHECK(events_of(t.trace, "s").empty());
    for (const auto& e : sends) {
      CHECK(e["args"]["bytes"] == 7 * 1048576);  // seven parts of n/p
      CHECK(e["args"]["flows"] == 7);
    }
  }
  SECTION("--trace-chips: only those chips' sides; arrows only between two shown chips") {
    auto args = a2a;
    args.insert(args.end(), {"--trace-chips", "0,2-3"});
    Traced t = traced_run(args, "chips.json");
    check_structure(t.trace);
    for (const auto& e : events_of(t.trace, "X")) CHECK((e["pid"] == 0 || e["pid"] == 2 || e["pid"] == 3));
    CHECK(events_of(t.trace, "X", "transfer").size() == 3 * 7);
    CHECK(events_of(t.trace, "s").size() == 3 * 2);
    CHECK(t.trace["otherData"]["trace"]["chips"] == json::array({0, 2, 3}));
  }
  SECTION("--trace-window: only what overlaps it; counters start at its start") {
    auto args =
        std::vector<std::string>{"--topology", "ring:8", "--collective", "allreduce",      "--algorithm",
                                 "ring",       "--size", "16MiB",        "--trace-window", "100us:200us"};
    Traced t = traced_run(args, "window.json");
    check_structure(t.trace);
    const auto sends = events_of(t.trace, "X", "transfer");
    CHECK(!sends.empty());
    CHECK(sends.size() < t.run["transfers"].get<std::size_t>());
    for (const auto& e : sends) {
      CHECK(e["ts"].get<double>() <= 200);
      CHECK(e["ts"].get<double>() + e["dur"].get<double>() >= 100);
    }
    for (const auto& e : events_of(t.trace, "C")) {
      CHECK(e["ts"].get<double>() >= 100);
      CHECK(e["ts"].get<double>() <= 200);
    }
  }
  SECTION("a name ending in .gz is gzipped, byte for byte the plain trace") {
    const std::string plain = temp_path("plain.json"), gz = temp_path("packed.json.gz");
    for (const std::string& path : {plain, gz}) {
      auto args = a2a;
      args.insert(args.begin(), "run");
      args.insert(args.end(), {"--trace", path});
      REQUIRE(run_cli(args).status == 0);
    }
    const std::string unpacked = gunzip(gz);
    // otherData's command differs by the file's name only.
    CHECK(unpacked.size() == read_file(plain).size() + (gz.size() - plain.size()));
    CHECK(read_file(gz).size() * 5 < unpacked.size());
    CHECK(json::parse(unpacked)["traceEvents"].size() == json::parse(read_file(plain))["traceEvents"].size());
  }
}

TEST_CASE("trace options that make no sense are bad input") {
  const std::vector<std::string> base{"run",    "--topology", "switch:4",    "--collective", "allreduce",
                                      "--size", "1KiB",       "--algorithm", "ring"};
  auto with = [&](std::vector<std::string> extra, bool traced = true) {
    auto args = base;
    if (traced) args.insert(args.end(), {"--trace", temp_path("bad.json")});
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  expect_input_error(with({"--trace-window", "5us"}), "expected FROM:TO");
  expect_input_error(with({"--trace-window", "2ms:1ms"}), "end is before its start");
  expect_input_error(with({"--trace-window", "x:1ms"}), "x");
  expect_input_error(with({"--trace-chips", "9"}), "chip 9 is not on this topology (its ranks are 0-3)");
  expect_input_error(with({"--trace-chips", "3-1"}), "runs backwards");
  expect_input_error(with({"--trace-aggregate", "link"}), "trace-aggregate");
  expect_input_error(with({"--trace-chips", "0"}, false), "shape --trace or --flows");
  expect_input_error(with({"--flows", "/nonexistent/dir/f.jsonl"}, false), "cannot write flow records");
}
