// The floors of the source tree, one way down (README.md's map, shared design "Modules and floors"):
//   sim/app -> workloads/experiments -> workloads -> sim/analysis -> sim/engines -> sim/machine ->
//   collectives -> topology -> topology/base
// A source may include its own floor and the floors below it, never one above; SimGrid is included only by
// the SimGrid engine (sim/engines/simgrid/). There is no exception list: a new back-up include fails here,
// naming the file and line.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Floor {
  const char* prefix;  // a folder of the repository, with its slash
  int level;
};

// Longer prefixes first: workloads/experiments/ before workloads/, topology/base/ before topology/.
const std::vector<Floor> kFloors{
    {"topology/base/", 0},         {"topology/", 1},    {"collectives/", 2},
    {"sim/machine/", 3},           {"sim/engines/", 4}, {"sim/analysis/", 5},
    {"workloads/experiments/", 7}, {"workloads/", 6},   {"sim/app/", 8},
};

std::optional<int> floor_of(const std::string& path) {
  for (const Floor& f : kFloors)
    if (path.rfind(f.prefix, 0) == 0) return f.level;
  return std::nullopt;
}

// Every include of `text` (the source at repository path `path`) that points up a floor, or to SimGrid
// outside sim/engines/simgrid/, as "path:line: why". Includes of files outside the floors (the standard
// library, Boost, generated headers) are not judged.
std::vector<std::string> layering_violations(const std::string& path, const std::string& text) {
  static const std::regex kQuoted(R"(^\s*#\s*include\s*"([^"]+)\")");
  static const std::regex kSimGrid(R"(^\s*#\s*include\s*<(simgrid|xbt|smpi)[/.>])");
  std::vector<std::string> found;
  const std::optional<int> own = floor_of(path);
  if (!own) return found;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    std::smatch m;
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (std::regex_search(line, m, kSimGrid) && path.rfind("sim/engines/simgrid/", 0) != 0)
      found.push_back(where + "includes SimGrid outside sim/engines/simgrid/");
    if (!std::regex_search(line, m, kQuoted)) continue;
    const std::string target = m[1];
    const std::optional<int> theirs = floor_of(target);
    if (theirs && *theirs > *own) found.push_back(where + "includes " + target + ", a floor above its own");
  }
  return found;
}

}  // namespace

TEST_CASE("layering: an include that points up a floor is named with its file and line") {
  CHECK(
      layering_violations("sim/engines/runner.hpp",
                          "#include \"workloads/collective/collective_job.hpp\"\n") ==
      std::vector<std::string>{"sim/engines/runner.hpp:1: includes workloads/collective/collective_job.hpp, "
                               "a floor above its own"});
  CHECK(
      layering_violations("sim/machine/program.cpp", "// x\n#include \"sim/engines/records.hpp\"\n").size() ==
      1);
  CHECK(layering_violations("topology/base/units.cpp", "#include \"topology/registry.hpp\"\n").size() == 1);
  CHECK(
      layering_violations("workloads/moe/moe.cpp", "#include \"workloads/experiments/sweep.hpp\"\n").size() ==
      1);
  CHECK(layering_violations("workloads/experiments/plan.cpp", "#include \"sim/app/commands/command.hpp\"\n")
            .size() == 1);
  CHECK(layering_violations("sim/engines/flow/flow_engine.cpp", "#include <simgrid/s4u.hpp>\n").size() == 1);
}

TEST_CASE("layering: includes of the same floor, floors below, and outside files pass") {
  CHECK(layering_violations(
            "workloads/serving/serving_run.cpp",
            "#include \"workloads/moe/moe.hpp\"\n#include \"sim/engines/runner.hpp\"\n"
            "#include \"topology/base/errors.hpp\"\n#include <vector>\n#include \"et_def.pb.h\"\n")
            .empty());
  CHECK(layering_violations("sim/engines/simgrid/fabric.cpp", "#include <simgrid/s4u.hpp>\n").empty());
  CHECK(layering_violations("sim/app/commands/run.cpp", "#include \"workloads/experiments/sweep.hpp\"\n")
            .empty());
}

TEST_CASE("layering: every source of the tree includes only its floor and the floors below") {
  namespace fs = std::filesystem;
  const fs::path root(ULTRASIM_SOURCE_DIR);
  std::vector<std::string> found;
  int sources = 0;
  for (const char* top : {"topology", "collectives", "sim", "workloads"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      const std::string path = fs::relative(entry.path(), root).generic_string();
      REQUIRE(floor_of(path));  // every source lies on a floor
      for (std::string& v : layering_violations(path, text.str())) found.push_back(std::move(v));
      ++sources;
    }
  }
  CHECK(sources > 200);  // the walk saw the tree
  for (const std::string& v : found) UNSCOPED_INFO(v);
  CHECK(found.empty());
}
