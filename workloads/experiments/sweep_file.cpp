// Reading a sweep: the --sizes and --seeds lists, and sweep files (collective and workload sweeps), each key
// checked.
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

}  // namespace ultrasim
