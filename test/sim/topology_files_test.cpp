// Topology files end to end: every generator's SimGrid XML and JSON export simulate exactly like the
// topology built in memory (each run is its own process: SimGrid allows one simulation per process).
#include <catch2/catch.hpp>

#include "cli_runner.hpp"
#include "topology/registry.hpp"

using namespace ultrasim;
using namespace ultrasim::test;

namespace {

std::string file_name(const std::string& spec, const std::string& extension) {
  std::string name = spec;
  for (char& c : name)
    if (c == ':' || c == '/') c = '_';
  return name + extension;
}

std::vector<std::string> small_allreduce(const std::string& topology) {
  return {"--topology", topology, "--collective", "allreduce", "--algorithm", "ring", "--size", "96KiB"};
}

}  // namespace

TEST_CASE("every generator's SimGrid XML export loads in SimGrid and gives the in-memory platform's times",
          "[export]") {
  int index = 0;
  for (const GeneratorEntry& entry : topology_generators()) {
    if (entry.name == "file") continue;
    // One exporter writes every generator's platform: under the sanitizers every third generator runs it.
    if (kSanitized && index++ % 3 != 0) continue;
    const std::string spec = entry.example_spec();
    INFO(spec);
    std::string xml = temp_path(file_name(spec, ".xml"));
    REQUIRE(run_cli({"topology", spec, "--format", "simgrid-xml", "-o", xml}).status == 0);
    auto args = small_allreduce(spec);
    // The fabric's own links (a protocol scaling them cannot run on a platform file: stack_cli_test.cpp).
    args.insert(args.end(), {"--engine", "simgrid", "--stack",
                             "ideal"});  // the in-memory SimGrid platform against the file's
    auto built = run_json(args);
    args.insert(args.end(), {"--platform", xml});
    auto loaded = run_json(args);
    CHECK(loaded["time_s"] == built["time_s"]);
    CHECK(loaded["verified"] == true);
  }
}

TEST_CASE("a JSON export, imported with file:PATH, simulates exactly like the topology it came from",
          "[import]") {
  struct Case {
    std::string spec, collective, algorithm;
    std::vector<std::string> sets;
  };
  for (const Case& c : std::vector<Case>{
           {"trn3", "allreduce", "hierarchical", {}},
           {"trn3", "alltoall", "direct", {"--set", "chip_forwarding=true"}},
           {"torus:3x4", "allgather", "bruck", {}},
           {"switch:6", "allreduce", "switch-reduce", {"--set", "switch_reduction=true"}},
       }) {
    INFO(c.spec << " " << c.collective << " " << c.algorithm);
    std::string json = temp_path(file_name(c.spec + c.algorithm, ".json"));
    std::vector<std::string> export_args{"topology", c.spec, "--format", "json", "-o", json};
    export_args.insert(export_args.end(), c.sets.begin(), c.sets.end());
    REQUIRE(run_cli(export_args).status == 0);
    auto run = [&](const std::string& topology) {
      std::vector<std::string> args{"--topology",  topology,    "--collective", c.collective,
                                    "--algorithm", c.algorithm, "--size",       "1000003"};
      if (topology == c.spec) args.insert(args.end(), c.sets.begin(), c.sets.end());
      return run_json(args);
    };
    auto original = run(c.spec);
    auto imported = run("file:" + json);
    CHECK(imported["time_s"] == original["time_s"]);
    CHECK(imported["model_s"] == original["model_s"]);
    CHECK(imported["bound_s"] == original["bound_s"]);
    CHECK(imported["verified"] == true);
    // And the export of the import is the same file.
    CHECK(run_cli({"topology", "file:" + json, "--format", "json"}).out == read_file(json));
  }
}
