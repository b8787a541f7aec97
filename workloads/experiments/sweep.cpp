#include "workloads/experiments/sweep.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>

#include "collectives/algorithm.hpp"
#include "collectives/schedule.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/progress.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "topology/registry.hpp"
#include "workloads/collective_job.hpp"
#include "workloads/experiments/tune.hpp"
#include "workloads/faults.hpp"

extern char** environ;

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

// {"workload": "moe", "base": {...} or "file.json", "grid": {"field": [values]}, "cases": [{...}]}.
SweepSpec read_workload_sweep(const nlohmann::ordered_json& j, const std::string& name) {
  auto fail = [&](const std::string& key, const std::string& what) {
    return InputError(name + ": \"" + key + "\" " + what);
  };
  for (const auto& [key, value] : j.items()) {
    static const std::set<std::string> known{"workload", "description", "base", "grid", "cases"};
    if (!known.count(key))
      throw InputError(name + ": " +
                       unknown_name_message("key of a workload sweep", key, {known.begin(), known.end()}));
  }
  SweepSpec spec;
  if (!j["workload"].is_string()) throw fail("workload", "must name a workload (ultrasim list workloads)");
  spec.workload = j["workload"].get<std::string>();
  spec.base = nlohmann::ordered_json::object();
  if (j.contains("base")) {
    const nlohmann::ordered_json& base = j["base"];
    if (base.is_string()) {
      const std::string path = base.get<std::string>();
      const std::string what = "workload file '" + path + "'";
      try {
        spec.base = parse_ordered_json_input(read_input_file(path, what, "a JSON workload object"), what);
      } catch (const nlohmann::json::exception& e) {
        throw InputError(name + ": base " + what + " is not JSON: " + json_error_text(e));
      }
    } else {
      spec.base = base;
    }
    if (!spec.base.is_object())
      throw fail("base", "must be a workload object or the path of a workload file");
  }
  if (spec.base.contains("workload") && spec.base["workload"] != spec.workload)
    throw fail("base",
               "is a " + json_text(spec.base["workload"]) + " workload, not \"" + spec.workload + "\"");
  spec.base["workload"] = spec.workload;
  if (j.contains("grid")) {
    if (!j["grid"].is_object()) throw fail("grid", "must be an object {\"field\": [values]}");
    for (const auto& [key, values] : j["grid"].items()) {
      if (!values.is_array() || values.empty())
        throw fail("grid." + key, "must be a non-empty list of values, not " + json_text(values));
      if (values.size() > kMaxSweepValues) throw fail("grid." + key, "has more than 100000 values");
      if (key == "workload") throw fail("grid.workload", "cannot vary: one sweep runs one workload");
      spec.grid.emplace_back(key, std::vector<nlohmann::ordered_json>(values.begin(), values.end()));
    }
  }
  if (j.contains("cases")) {
    if (!j["cases"].is_array() || j["cases"].empty())
      throw fail("cases", "must be a non-empty list of objects, each the fields a case changes");
    if (j["cases"].size() > kMaxSweepValues) throw fail("cases", "has more than 100000 entries");
    for (const auto& c : j["cases"]) {
      if (!c.is_object() || c.contains("workload"))
        throw fail("cases", "must list objects of workload fields (not \"workload\"), not " + json_text(c));
      spec.cases.push_back(c);
    }
  }
  return spec;
}

}  // namespace

std::vector<std::uint64_t> parse_sizes(const std::string& text) {
  return parse_series(
      text, "--sizes", "sizes", [](const std::string& item) { return parse_bytes(item); }, kMaxSweepValues);
}

std::uint64_t parse_seed(const std::string& text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    throw InputError("invalid seed '" + text + "'; expected a whole number from 0 to 9999999999999999999");
  return std::stoull(text);
}

std::vector<std::uint64_t> parse_seeds(const std::string& text) {
  auto seed = parse_seed;
  std::vector<std::uint64_t> seeds;
  if (text.find(':') != std::string::npos) {
    auto range = split_items(text, ':');
    if (range.size() != 2) throw InputError("invalid --seeds '" + text + "'; expected A:B or a list");
    const std::uint64_t from = seed(range[0]), to = seed(range[1]);
    if (to > from && to - from > kMaxSweepValues)  // counted before any is made
      throw InputError("--seeds '" + text + "' gives more than 100000 seeds");
    for (std::uint64_t s = from; s < to; ++s) seeds.push_back(s);
  } else {
    for (const auto& item : split_items(text, ',')) seeds.push_back(seed(item));
  }
  if (seeds.empty()) throw InputError("--seeds '" + text + "' gives no seed");
  if (seeds.size() > kMaxSweepValues) throw InputError("--seeds '" + text + "' gives more than 100000 seeds");
  return seeds;
}

namespace {

// A collective sweep file's keys, each read with its checks; errors name the file and the key.
class SweepFileReader {
 public:
  SweepFileReader(std::string name, const nlohmann::json& j) : name_(std::move(name)), j_(j) {}

  InputError fail(const std::string& key, const std::string& what) const {
    return InputError(name_ + ": \"" + key + "\" " + what);
  }
  void check_keys() const {
    static const std::set<std::string> known{"topologies", "collectives", "algorithms",  "sizes",   "sets",
                                             "seeds",      "faults",      "description", "workload"};
    for (const auto& [key, value] : j_.items())
      if (!known.count(key))
        throw InputError(name_ + ": " + unknown_name_message("key", key, {known.begin(), known.end()}));
  }
  // A list of at most kMaxSweepValues entries.
  const nlohmann::json& array(const std::string& key) const {
    const nlohmann::json& value = j_[key];
    if (!value.is_array()) throw fail(key, "must be a list, not " + value.dump());
    if (value.size() > kMaxSweepValues) throw fail(key, "has more than 100000 entries");
    return value;
  }
  // A non-empty list of strings into `out`; absent: `out` unchanged (or an error when required).
  void strings(const char* key, std::vector<std::string>& out, bool required) const {
    if (!j_.contains(key)) {
      if (required) throw InputError(name_ + " has no \"" + key + "\"");
      return;
    }
    out.clear();
    for (const auto& v : array(key)) {
      if (!v.is_string()) throw fail(key, "must list strings, not " + v.dump());
      out.push_back(v.get<std::string>());
    }
    if (out.empty()) throw fail(key, "is empty");
  }
  // A whole number >= 0 written as a JSON integer (sizes may also be strings with units).
  std::uint64_t whole(const std::string& key, const nlohmann::json& v) const {
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    throw fail(key, "must list whole numbers >= 0" +
                        std::string(key == "sizes" ? " or sizes such as \"1MiB\"" : "") + ", not " +
                        v.dump());
  }
  // "sizes": a --sizes text, or a list of byte counts and sizes with units.
  std::vector<std::uint64_t> sizes() const {
    if (!j_.contains("sizes")) throw InputError(name_ + " has no \"sizes\"");
    if (j_["sizes"].is_string()) return parse_sizes(j_["sizes"].get<std::string>());
    std::vector<std::uint64_t> out;
    for (const auto& v : array("sizes"))
      out.push_back(v.is_string() ? parse_bytes(v.get<std::string>()) : whole("sizes", v));
    if (out.empty()) throw fail("sizes", "is empty");
    return out;
  }
  // "sets": {"name": [values]}, each value as --set would take it.
  std::vector<std::pair<std::string, std::vector<std::string>>> sets() const {
    std::vector<std::pair<std::string, std::vector<std::string>>> out;
    if (!j_.contains("sets")) return out;
    if (!j_["sets"].is_object())
      throw fail("sets", "must be an object {\"name\": [values]}, not " + j_["sets"].dump());
    for (const auto& [key, values] : j_["sets"].items()) {
      const std::string where = "sets." + key;
      if (!values.is_array() || values.empty())
        throw fail(where, "must be a non-empty list of values, not " + values.dump());
      std::vector<std::string> list;
      for (const auto& v : values) {
        if (!v.is_string() && !v.is_number() && !v.is_boolean())
          throw fail(where, "must list strings, numbers or booleans, not " + v.dump());
        list.push_back(v.is_string() ? v.get<std::string>() : v.dump());
      }
      out.emplace_back(key, list);
    }
    return out;
  }

 private:
  std::string name_;
  const nlohmann::json& j_;
};

}  // namespace

SweepSpec read_sweep_file(const std::string& path) {
  const std::string name = "sweep file '" + path + "'";
  const std::string text = read_input_file(path, name, "a JSON file");
  nlohmann::json j;
  try {
    j = parse_json_input(text, name);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e400
    throw InputError(name + " is not JSON: " + json_error_text(e));
  }
  if (!j.is_object()) throw InputError(name + ": expected an object {\"topologies\": [...], ...}");
  if (j.contains("workload")) return read_workload_sweep(parse_ordered_json_input(text, name), name);
  const SweepFileReader file(name, j);
  file.check_keys();
  SweepSpec spec;
  file.strings("topologies", spec.topologies, true);
  file.strings("collectives", spec.collectives, true);
  spec.algorithms = {"all"};
  file.strings("algorithms", spec.algorithms, false);
  file.strings("faults", spec.faults, false);
  spec.sizes = file.sizes();
  spec.sets = file.sets();
  if (j.contains("seeds")) {
    spec.seeds.clear();
    for (const auto& v : file.array("seeds")) spec.seeds.push_back(file.whole("seeds", v));
    if (spec.seeds.empty()) throw file.fail("seeds", "is empty");
  }
  return spec;
}

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

nlohmann::ordered_json sweep_row(const SweepPoint& point, int exit_status, const std::string& out,
                                 const std::string& err) {
  nlohmann::ordered_json row{{"point", point.id}, {"status", exit_status == 0 ? "ok" : "error"}};
  const nlohmann::ordered_json inputs = point.inputs();
  for (const auto& [key, value] : inputs.items()) row[key] = value;
  nlohmann::ordered_json result;
  try {
    result = nlohmann::ordered_json::parse(out);
  } catch (const std::exception&) {
  }
  if (result.is_object())
    for (const auto& [key, value] : result.items())
      if (!row.contains(key)) row[key] = value;
  if (exit_status != 0) {
    std::string message = err.substr(0, err.find('\n'));
    const std::string prefix = "ultrasim: error: ";
    if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
    if (message.empty())
      message = exit_status == 3 ? "verification failed" : "exit status " + std::to_string(exit_status);
    // A refused point names the algorithm it asked for, so that rows of one size differ.
    if (!row.contains("algorithm") && row.contains("requested_algorithm"))
      row["algorithm"] = row["requested_algorithm"];
    row["error"] = message;
    row["exit_status"] = exit_status;
  }
  return row;
}

std::map<int, nlohmann::ordered_json> read_finished(const std::string& path,
                                                    const std::vector<SweepPoint>& grid) {
  std::map<int, nlohmann::ordered_json> rows;
  std::ifstream in(path);
  int torn = 0;  // the line torn by a killed sweep, if any: it must be the last
  auto not_ours = [&](int line) {
    return InputError("--resume: '" + path + "' line " + std::to_string(line) +
                      " is not a row of an ultrasim sweep (another program's file?); it was left as it was");
  };
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (torn > 0) throw not_ours(torn);  // a line that is not JSON, with rows after it
    nlohmann::ordered_json row;
    try {
      row = parse_ordered_json_input(line, path);
    } catch (const std::exception&) {
      if (!line.starts_with("{\"point\":")) throw not_ours(number);
      torn = number;  // a killed sweep's last line: that point runs again
      continue;
    }
    if (!row.is_object() || !row.contains("point") || !row.contains("status")) throw not_ours(number);
    if (!row["point"].is_number_integer())
      throw InputError("--resume: '" + path + "' has a row whose \"point\" is " + row["point"].dump() +
                       ", not a point number (another program's file?)");
    const std::int64_t id = row["point"].get<std::int64_t>();
    if (id < 0 || id >= static_cast<std::int64_t>(grid.size()))
      throw InputError("--resume: '" + path + "' has point " + std::to_string(id) + ", outside this sweep");
    const nlohmann::ordered_json inputs = grid[id].inputs();
    for (const auto& [key, value] : inputs.items())
      if (row[key] != value)
        throw InputError("--resume: '" + path + "' point " + std::to_string(id) + " has " + key + " " +
                         json_text(row[key]) + ", this sweep " + json_text(value) +
                         " (another sweep's file?)");
    rows[static_cast<int>(id)] = row;
  }
  return rows;
}

namespace {

struct Child {
  pid_t pid = -1;
  int point = 0;
  std::string out, err;
  std::chrono::steady_clock::time_point start;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Child spawn(const SweepOptions& options, const SweepPoint& point, const std::string& dir) {
  const std::string& binary = options.binary;
  Child child;
  child.point = point.id;
  child.out = dir + "/" + std::to_string(point.id) + ".out";
  child.err = dir + "/" + std::to_string(point.id) + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, child.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, child.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!point.workload.empty()) {  // the point's workload object, on the standard input of `workload -`
    const std::string spec_file = dir + "/" + std::to_string(point.id) + ".json";
    std::ofstream(spec_file) << json_text(point.spec);
    posix_spawn_file_actions_addopen(&actions, 0, spec_file.c_str(), O_RDONLY, 0);
  }
  std::vector<std::string> args = point.run_args();
  args.insert(args.end(), options.run_extra.begin(), options.run_extra.end());
  args.insert(args.begin(), binary);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  child.start = std::chrono::steady_clock::now();
  if (posix_spawn(&child.pid, binary.c_str(), &actions, nullptr, argv.data(), environ) != 0)
    throw std::runtime_error("cannot start " + binary);
  posix_spawn_file_actions_destroy(&actions);
  return child;
}

// The whole text of a rows file.
std::string rows_text(const std::string& format, const std::vector<std::string>& columns,
                      const std::vector<nlohmann::ordered_json>& rows) {
  std::string text = format == "csv" ? sweep_csv_header(columns) : "";
  for (const auto& row : rows) text += format == "csv" ? sweep_csv_line(row, columns) : sweep_json_line(row);
  return text;
}

}  // namespace

namespace {

// Where rows go as points finish: the --out file (written in place and appended to, row by row, so a
// killed sweep keeps what finished and --resume reads it back; locked against a second sweep for the
// whole run: topology/base/output_file.hpp) and the --timing file (appended to, unlocked). Opened before
// --out is read back or emptied, so a second sweep is refused before it touches the file.
struct SweepSinks {
  std::unique_ptr<AppendedFile> out, timing;
};

SweepSinks open_sweep_sinks(const SweepOptions& options) {
  SweepSinks sinks;
  if (!options.out.empty()) sinks.out = std::make_unique<AppendedFile>(options.out, "--out file", true);
  if (!options.timing.empty())
    sinks.timing = std::make_unique<AppendedFile>(options.timing, "--timing file", false);
  return sinks;
}

// Ctrl-C (SIGINT) while points run: the sweep stops starting points, stops those running (a terminal
// sent them the signal too), keeps every row that finished and says so (SweepInterrupted).
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) {
  g_interrupted = 1;
}

class InterruptWatch {
 public:
  InterruptWatch() {
    g_interrupted = 0;
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_);  // no SA_RESTART: waitpid returns at once
  }
  ~InterruptWatch() { sigaction(SIGINT, &previous_, nullptr); }
  bool interrupted() const { return g_interrupted != 0; }

 private:
  struct sigaction previous_ {};
};

// Runs `pending` as child processes, options.jobs at a time, in `dir`; `finish(child, exit status)` is
// called as each ends, in the order they end. Once it returns false, or Ctrl-C is pressed, no more points
// start (those running are stopped and waited for, and finish is not called for them). Returns whether
// Ctrl-C stopped it.
bool run_point_processes(const std::vector<const SweepPoint*>& pending, const SweepOptions& options,
                         const std::string& dir, const std::function<bool(const Child&, int)>& finish) {
  const InterruptWatch watch;
  std::map<pid_t, Child> running;
  std::size_t next = 0;
  bool going = true, stopped = false;
  while ((going && next < pending.size()) || !running.empty()) {
    while (going && next < pending.size() && static_cast<int>(running.size()) < std::max(1, options.jobs)) {
      Child child = spawn(options, *pending[next++], dir);
      running[child.pid] = child;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (watch.interrupted() && !stopped) {
      going = false, stopped = true;
      for (const auto& [running_pid, child] : running) kill(running_pid, SIGINT);
    }
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    Child child = it->second;
    running.erase(it);
    if (going) going = finish(child, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return stopped;
}

// What an interrupted sweep kept, and how to go on.
std::string interrupted_message(const SweepOptions& options, std::size_t finished, std::size_t total) {
  std::string text =
      "interrupted: " + std::to_string(finished) + " of " + std::to_string(total) + " points finished";
  if (options.out.empty()) return text + "; without --out no file keeps their rows";
  text += ", their rows kept in " + options.out;
  return text + (options.format == "jsonl"
                     ? "; the same command with --resume runs the other " + std::to_string(total - finished)
                     : "; --resume continues a sweep written with --format jsonl");
}

// This shard's points, and with --resume the rows an earlier run of the same sweep finished (its file
// rewritten without a torn last line).
std::vector<const SweepPoint*> shard_points(const std::vector<SweepPoint>& grid,
                                            const SweepOptions& options) {
  std::vector<const SweepPoint*> todo;
  for (const auto& point : grid)
    if (!options.shard || point.id % options.shard->second == options.shard->first) todo.push_back(&point);
  return todo;
}

std::map<int, nlohmann::ordered_json> resumed_rows(const std::vector<SweepPoint>& grid,
                                                   const SweepOptions& options, AppendedFile& out) {
  std::map<int, nlohmann::ordered_json> done = read_finished(options.out, grid);
  std::vector<nlohmann::ordered_json> kept;
  for (auto& [id, row] : done) kept.push_back(row);
  out.replace(rows_text(options.format, options.columns, kept));  // drops a torn last line
  return done;
}

}  // namespace

std::vector<nlohmann::ordered_json> run_sweep(const std::vector<SweepPoint>& grid,
                                              const SweepOptions& options) {
  const std::vector<const SweepPoint*> todo = shard_points(grid, options);
  if (options.resume && (options.out.empty() || options.format != "jsonl"))
    throw InputError("--resume needs --out FILE in the jsonl format");
  SweepSinks sinks = open_sweep_sinks(options);
  std::map<int, nlohmann::ordered_json> done;
  if (options.resume) {
    done = resumed_rows(grid, options, *sinks.out);
  } else if (sinks.out) {
    sinks.out->truncate();
    if (options.format == "csv") sinks.out->append(sweep_csv_header(options.columns));
  }
  std::string dir =
      (std::filesystem::temp_directory_path() / ("ultrasim-sweep-" + std::to_string(getpid()))).string();
  std::filesystem::create_directories(dir);

  std::vector<const SweepPoint*> pending;
  for (const SweepPoint* p : todo)
    if (!done.count(p->id)) pending.push_back(p);
  std::exception_ptr write_failure;
  bool interrupted = false;
  {
    Progress progress("sweep", todo.size(), todo.size() - pending.size());
    interrupted =
        run_point_processes(pending, options, dir, [&](const Child& child, int exit_status) -> bool {
          nlohmann::ordered_json row =
              sweep_row(grid[child.point], exit_status, slurp(child.out), slurp(child.err));
          std::filesystem::remove(child.out), std::filesystem::remove(child.err);
          std::filesystem::remove(dir + "/" + std::to_string(child.point) + ".json");
          double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - child.start).count();
          try {  // a failed write (a full disk) stops the sweep: no more points start, and it fails
            if (sinks.out)
              sinks.out->append(options.format == "csv" ? sweep_csv_line(row, options.columns)
                                                        : sweep_json_line(row));
            if (sinks.timing)
              sinks.timing->append(nlohmann::ordered_json{{"point", child.point}, {"wall_s", wall}}.dump() +
                                   "\n");
          } catch (...) {
            write_failure = std::current_exception();
            return false;
          }
          done[child.point] = row;
          progress.advance();
          return true;
        });
  }
  std::filesystem::remove_all(dir);
  if (write_failure) std::rethrow_exception(write_failure);
  std::vector<nlohmann::ordered_json> rows;
  for (const SweepPoint* p : todo)
    if (done.count(p->id)) rows.push_back(done[p->id]);
  if (sinks.out) sinks.out->replace(rows_text(options.format, options.columns, rows));  // sorted by point
  if (interrupted) throw Interrupted(interrupted_message(options, rows.size(), todo.size()));
  return rows;
}

namespace {

// A workload sweep's rows: each point's headline field (the kind's first column, a time in seconds).
std::string workload_points_summary(const std::vector<nlohmann::ordered_json>& rows,
                                    const std::string& headline) {
  std::ostringstream points;
  for (const auto& row : rows) {
    if (row["status"] != "ok" || !row.contains("inputs")) continue;
    if (points.tellp() == 0)
      points << "# " << row["workload"].get<std::string>() << ": " << headline << " per point\n";
    const nlohmann::ordered_json& value = row.contains(headline) ? row[headline] : nlohmann::ordered_json();
    points << "  " << row["point"] << "  "
           << (value.is_number() ? fixed_text(value.get<double>() * 1e6, 2) + " us" : std::string("-"))
           << "  " << json_text(row["inputs"]) << "\n";
  }
  return points.str();
}

// Collective rows: per group, the best algorithm per size and its runner-up, ranked as `ultrasim tune`
// ranks them (rank_sweep_rows).
std::string best_per_size_summary(const std::vector<nlohmann::ordered_json>& rows) {
  std::vector<SweepRow> parsed;
  for (const auto& row : rows)
    if (!row.contains("inputs")) parsed.push_back(sweep_row_from_json(nlohmann::json(row), "sweep", 0));
  std::ostringstream s;
  char line[256];
  auto fixed = [](const nlohmann::json& value, double scale) {
    return value.is_null() ? std::string("-") : fixed_text(value.get<double>() * scale, 2);
  };
  for (const auto& group : rank_sweep_rows(parsed)) {
    s << "# best per size: " << group.topology << " " << group.collective
      << (group.sets.empty() ? "" : " " + json_text(group.sets)) << "\n";
    std::snprintf(line, sizeof line, "%14s  %-20s %12s %12s  %-20s %12s\n", "size", "best", "time(us)",
                  "busbw(GB/s)", "runner-up", "time(us)");
    s << line;
    for (const auto& [bytes, best, runner] : group.sizes) {
      std::snprintf(line, sizeof line, "%14llu  %-20s %12s %12s  %-20s %12s\n",
                    static_cast<unsigned long long>(bytes), best->algorithm.c_str(),
                    fixed_text(best->time_s * 1e6, 2).c_str(), fixed(best->busbw_GBps, 1).c_str(),
                    runner ? runner->algorithm.c_str() : "-",
                    runner ? fixed_text(runner->time_s * 1e6, 2).c_str() : "-");
      s << line;
    }
  }
  return s.str();
}

}  // namespace

std::string sweep_summary(const std::vector<nlohmann::ordered_json>& rows,
                          const std::vector<std::string>& columns) {
  const auto failed =
      std::count_if(rows.begin(), rows.end(), [](auto& row) { return row["status"] != "ok"; });
  return best_per_size_summary(rows) + workload_points_summary(rows, columns.empty() ? "" : columns.front()) +
         std::to_string(rows.size()) + " points, " + std::to_string(failed) + " failed\n";
}

std::string sweep_json_line(const nlohmann::ordered_json& row) {
  // A file: PATH topology may hold bytes that are not UTF-8: they become U+FFFD rather than an exception.
  return json_text(row) + "\n";
}

std::string sweep_csv_header(const std::vector<std::string>& columns) {
  if (!columns.empty()) {
    std::string header = "point,status,workload,inputs";
    for (const auto& c : columns) header += "," + c;
    return header + ",error\n";
  }
  return "point,status,topology,collective,requested_algorithm,algorithm,bytes,seed,sets,time_s,algbw_GBps,"
         "busbw_GBps,model_s,bound_s,pct_of_bound,verified,wrong,error\n";
}

std::string sweep_csv_line(const nlohmann::ordered_json& row, const std::vector<std::string>& columns) {
  auto field = [&](const std::string& key) -> std::string {
    if (!row.contains(key) || row[key].is_null()) return "";
    if (row[key].is_string()) return row[key].get<std::string>();
    return json_text(row[key]);
  };
  std::string line;
  if (!columns.empty()) {
    std::vector<std::string> keys{"point", "status", "workload", "inputs"};
    keys.insert(keys.end(), columns.begin(), columns.end());
    keys.push_back("error");
    for (const std::string& key : keys) line += (line.empty() ? "" : ",") + csv_text(field(key));
    return line + "\n";
  }
  for (const char* key : {"point", "status", "topology", "collective", "requested_algorithm", "algorithm",
                          "bytes", "seed", "sets", "time_s", "algbw_GBps", "busbw_GBps", "model_s", "bound_s",
                          "pct_of_bound", "verified", "wrong", "error"})
    line += (line.empty() ? "" : ",") + csv_text(field(key));
  return line + "\n";
}

}  // namespace ultrasim
