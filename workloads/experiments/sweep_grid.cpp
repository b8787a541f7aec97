// A sweep's grid: its points, expanded and counted before any is made, each with its command line and inputs.
#include "workloads/experiments/sweep.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "collectives/algorithm.hpp"
#include "collectives/schedule.hpp"
#include "sim/machine/faults.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/progress.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "topology/registry.hpp"
#include "workloads/collective/collective_job.hpp"
#include "workloads/experiments/tune.hpp"

namespace ultrasim {
namespace {

// Every parameter a point may set: its topology's, the model's and its algorithm's (all of the
// collective's for "auto"; a schedule file declares none of its own).
std::vector<ParamSpec> declared(const std::string& topology, const std::string& collective,
                                const std::string& algorithm) {
  std::vector<ParamSpec> specs = generator_params(topology);
  const bool schedule = algorithm.starts_with(kScheduleFilePrefix);
  for (const ParamSpec& s : declared_params(schedule ? std::vector<const AlgorithmEntry*>{}
                                                     : algorithm_candidates(collective, algorithm)))
    specs.push_back(s);
  return specs;
}

}  // namespace

namespace {

using NamedLists = std::vector<std::pair<std::string, std::vector<std::string>>>;

// Steps an odometer over lists of the given sizes, the last fastest; false once it has wrapped around.
bool advance(std::vector<std::size_t>& index, const std::vector<std::size_t>& sizes) {
  for (std::size_t k = index.size(); k-- > 0;) {
    if (++index[k] < sizes[k]) return true;
    index[k] = 0;
  }
  return false;
}

template <class Lists>
std::vector<std::size_t> list_sizes(const Lists& lists) {
  std::vector<std::size_t> sizes;
  for (const auto& [name, values] : lists) sizes.push_back(values.size());
  return sizes;
}

// Each collective with the algorithms of the sweep that run it ("all" expanded, "auto" and schedule
// files kept for every collective); an algorithm no collective has fails with "did you mean".
NamedLists algorithms_by_collective(const SweepSpec& spec) {
  NamedLists algorithms_of;
  std::set<std::string> used;
  for (const auto& c : spec.collectives) {
    find_collective(c);
    std::vector<std::string> names;
    for (const auto& a : spec.algorithms) {
      if (a == "all") {
        for (const AlgorithmEntry& entry : algorithms())
          if (entry.collective == c) names.push_back(entry.name);
        used.insert(a);
      } else if (a == "auto") {
        names.push_back(a), used.insert(a);
      } else if (a.starts_with(kScheduleFilePrefix)) {  // a schedule file: run for every collective given
        const std::string path = a.substr(std::string_view(kScheduleFilePrefix).size());
        check_input_file(path, "schedule file '" + path + "'", "a JSON schedule");
        names.push_back(a), used.insert(a);
      } else {
        for (const AlgorithmEntry& entry : algorithms())
          if (entry.collective == c && entry.name == a) names.push_back(a), used.insert(a);
      }
    }
    algorithms_of.emplace_back(c, names);
  }
  for (const auto& a : spec.algorithms)
    if (!used.count(a)) find_algorithm(spec.collectives.front(), a);  // no collective has it: did you mean
  return algorithms_of;
}

// Counted before any point is made: a grid of 1e8 points would take gigabytes to refuse.
void check_point_count(const SweepSpec& spec, const NamedLists& algorithms_of) {
  double points = 0;
  for (const auto& [c, names] : algorithms_of) points += static_cast<double>(names.size());
  points *= static_cast<double>(spec.topologies.size() * spec.sizes.size() * spec.seeds.size());
  for (const auto& [name, values] : spec.sets)
    points *= static_cast<double>(std::max<std::size_t>(1, values.size()));
  if (points > kMaxSweepValues)
    throw InputError("the sweep has " + shortest_number(points) +
                     " points (at most; --set values cross), over the limit of " +
                     std::to_string(kMaxSweepValues));
}

// The --set lists that apply to one (topology, collective, algorithm), each value checked in its unit;
// the names found go into `applied`.
NamedLists applicable_sets(const SweepSpec& spec, const std::vector<ParamSpec>& specs,
                           std::set<std::string>& applied) {
  NamedLists sets;
  for (const auto& [name, values] : spec.sets) {
    if (values.empty()) throw InputError("--set " + name + "= gives no value; expected name=v1,v2,...");
    // (clang 14, which builds the fuzzers, cannot capture a structured binding)
    auto it = std::find_if(specs.begin(), specs.end(),
                           [&name = name](const ParamSpec& s) { return s.name == name; });
    if (it == specs.end()) continue;
    ParamSet check({*it});
    for (const auto& v : values) check.apply({{name, v}});
    sets.emplace_back(name, values), applied.insert(name);
  }
  return sets;
}

}  // namespace

std::vector<SweepPoint> expand(const SweepSpec& spec) {
  if (spec.topologies.empty() || spec.collectives.empty() || spec.algorithms.empty() || spec.sizes.empty())
    throw InputError("a sweep needs --topology, --collective, --algorithm and --sizes");
  for (const auto& t : spec.topologies) {  // unknown or bad: InputError
    const Topology topology = make_topology(t, model_params(), {});
    // A fault that names nothing on the topology fails every point alike, unless --set reshapes it.
    if (spec.sets.empty())
      with_context("--fault on " + t, [&] { return plan_faults(spec.faults, topology); });
  }
  const NamedLists algorithms_of = algorithms_by_collective(spec);
  check_point_count(spec, algorithms_of);
  std::set<std::string> applied;
  std::vector<SweepPoint> grid;
  for (const auto& t : spec.topologies)
    for (const auto& [c, names] : algorithms_of)
      for (const auto& a : names) {
        const NamedLists sets = applicable_sets(spec, declared(t, c, a), applied);
        const std::vector<std::size_t> sizes = list_sizes(sets);
        for (std::uint64_t bytes : spec.sizes) {
          std::vector<std::size_t> index(sets.size(), 0);  // odometer over the value lists
          do {
            for (std::uint64_t seed : spec.seeds) {
              SweepPoint point{static_cast<int>(grid.size()), t, c, a, bytes, seed, {}, {}, {}, {}};
              for (std::size_t k = 0; k < sets.size(); ++k)
                point.sets.emplace_back(sets[k].first, sets[k].second[index[k]]);
              grid.push_back(point);
            }
          } while (advance(index, sizes));
        }
      }
  for (const auto& [name, values] : spec.sets)
    if (!applied.count(name))
      throw InputError("--set " + name +
                       ": no topology, model or algorithm of this sweep has that parameter");
  return grid;
}

std::vector<SweepPoint> expand_workloads(const SweepSpec& spec, const WorkloadCheck& check) {
  std::size_t total = spec.cases.empty() ? 1 : spec.cases.size();
  for (const auto& [key, values] : spec.grid) {
    if (total > kMaxSweepValues / values.size()) throw InputError("the sweep has more than 100000 points");
    total *= values.size();
  }
  const std::vector<nlohmann::ordered_json> cases =
      spec.cases.empty() ? std::vector<nlohmann::ordered_json>{nlohmann::ordered_json::object()} : spec.cases;
  std::vector<SweepPoint> grid;
  for (const nlohmann::ordered_json& variant : cases) {
    const std::vector<std::size_t> sizes = list_sizes(spec.grid);
    std::vector<std::size_t> index(spec.grid.size(), 0);  // odometer over the axes, the first slowest
    do {
      SweepPoint point;
      point.id = static_cast<int>(grid.size());
      point.workload = spec.workload;
      point.patch = variant;
      for (std::size_t k = 0; k < spec.grid.size(); ++k)
        point.patch[spec.grid[k].first] = spec.grid[k].second[index[k]];
      point.spec = spec.base;
      point.spec.merge_patch(point.patch);
      check(nlohmann::json::parse(json_text(point.spec)),
            "sweep point " + std::to_string(point.id) + " " + json_text(point.patch));
      grid.push_back(std::move(point));
    } while (advance(index, sizes));
  }
  return grid;
}

std::vector<std::string> SweepPoint::run_args() const {
  if (!workload.empty()) return {"workload", "-", "--format", "json"};
  std::vector<std::string> args{
      "run",    "--topology",          topology, "--collective",      collective, "--algorithm", algorithm,
      "--size", std::to_string(bytes), "--seed", std::to_string(seed)};
  for (const auto& [name, value] : sets) args.insert(args.end(), {"--set", name + "=" + value});
  args.insert(args.end(), {"--format", "json"});
  return args;
}

nlohmann::ordered_json SweepPoint::inputs() const {
  if (!workload.empty()) return {{"workload", workload}, {"inputs", patch}};
  nlohmann::ordered_json sets_json = nlohmann::ordered_json::object();
  for (const auto& [name, value] : sets) sets_json[name] = value;
  return {{"topology", topology},
          {"collective", collective},
          {"requested_algorithm", algorithm},
          {"bytes", bytes},
          {"seed", seed},
          {"sets", sets_json}};
}

}  // namespace ultrasim
