#include "workloads/experiments/tune.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "collectives/algorithm.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {
namespace {

using json = nlohmann::json;

[[noreturn]] void bad_row(const std::string& source, int line, const std::string& what) {
  throw InputError(source + ":" + std::to_string(line) + ": " + what);
}

const json& field(const json& row, const char* name, const std::string& source, int line) {
  auto it = row.find(name);
  if (it == row.end()) bad_row(source, line, std::string("row has no \"") + name + "\"");
  return *it;
}

std::string text_field(const json& row, const char* name, const std::string& source, int line) {
  const json& value = field(row, name, source, line);
  if (!value.is_string()) bad_row(source, line, std::string("\"") + name + "\" is not a string");
  return value.get<std::string>();
}

// The names every registered algorithm declares as its own (pipeline_chunks, groups, ...).
const std::set<std::string>& algorithm_parameter_names() {
  static const std::set<std::string> names = [] {
    std::set<std::string> out;
    for (const auto& entry : algorithms())
      for (const auto& spec : entry.params) out.insert(spec.name);
    return out;
  }();
  return names;
}

// The values of the algorithm's own parameters in a row's "parameters" (empty for an unregistered one,
// e.g. a file: schedule).
json own_parameters(const SweepRow& row) {
  json out = json::object();
  for (const auto& entry : algorithms()) {
    if (entry.collective != row.collective || entry.name != row.algorithm) continue;
    for (const auto& spec : entry.params) {
      auto it = row.parameters.find(spec.name);
      if (it != row.parameters.end()) out[spec.name] = *it;
    }
  }
  return out;
}

json machine_sets(const json& sets) {
  json out = json::object();
  for (const auto& [name, value] : sets.items())
    if (!algorithm_parameter_names().count(name)) out[name] = value;
  return out;
}

bool read_before(const SweepRow* a, const SweepRow* b) {
  return std::tie(a->file, a->point, a->line) < std::tie(b->file, b->point, b->line);
}

// "4 MiB" when exact in a binary unit, else bytes.
std::string size_text(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + units[unit];
}

std::string value_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number()) return shortest_number(value.get<double>());
  return value.dump();
}

std::string assignments(const json& object) {
  std::string out;
  for (const auto& [name, value] : object.items())
    out += (out.empty() ? "" : " ") + name + "=" + value_text(value);
  return out;
}

}  // namespace

SweepRow sweep_row_from_json(const json& row, const std::string& source, int line, int file_index) {
  if (!row.is_object()) bad_row(source, line, "not a JSON object");
  SweepRow out;
  out.file = file_index;
  out.line = line;
  const json& point = field(row, "point", source, line);
  if (!point.is_number_integer()) bad_row(source, line, "\"point\" is not an integer");
  out.point = point.get<long long>();
  const std::string status = text_field(row, "status", source, line);
  if (status != "ok" && status != "error")
    bad_row(source, line, "\"status\" is '" + status + "', expected ok or error");
  if (status != "ok") return out;
  out.topology = text_field(row, "topology", source, line);
  out.collective = text_field(row, "collective", source, line);
  out.algorithm = text_field(row, "algorithm", source, line);
  const json& bytes = field(row, "bytes", source, line);
  if (!bytes.is_number_unsigned()) bad_row(source, line, "\"bytes\" is not a non-negative integer");
  try {
    out.bytes = checked_bytes(bytes.get<std::uint64_t>());
  } catch (const InputError&) {
    bad_row(source, line, "\"bytes\" " + bytes.dump() + " is over 2^53, the largest size a sweep writes");
  }
  const json& time = field(row, "time_s", source, line);
  if (!time.is_number() || time.get<double>() < 0) bad_row(source, line, "\"time_s\" is not a time");
  out.time_s = time.get<double>();
  const json& verified = field(row, "verified", source, line);
  if (!verified.is_boolean()) bad_row(source, line, "\"verified\" is not true or false");
  for (const char* name : {"sets", "parameters"}) {
    auto it = row.find(name);
    if (it == row.end()) continue;
    if (!it->is_object()) bad_row(source, line, std::string("\"") + name + "\" is not an object");
    (std::string(name) == "sets" ? out.sets : out.parameters) = *it;
  }
  if (auto it = row.find("busbw_GBps"); it != row.end() && it->is_number()) out.busbw_GBps = *it;
  out.ok = verified.get<bool>();
  return out;
}

std::vector<SweepRow> read_sweep_rows(std::istream& in, const std::string& source, int file_index) {
  std::vector<SweepRow> rows;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos) continue;
    json row;
    try {
      row = parse_json_input(text, source + ": line " + std::to_string(line));
    } catch (const json::parse_error& e) {
      bad_row(source, line, "not JSON (parse error at column " + std::to_string(e.byte) + ")");
    } catch (const json::exception&) {  // out_of_range: a number such as 1e400
      bad_row(source, line, "not JSON that ultrasim can read (a number out of range)");
    }
    rows.push_back(sweep_row_from_json(row, source, line, file_index));
  }
  return rows;
}

std::vector<SweepRow> read_sweep_rows(const std::string& path, int file_index) {
  std::istringstream in(read_input_file(path, "sweep rows '" + path + "'", "a JSON Lines file"));
  return read_sweep_rows(in, path, file_index);
}

std::vector<RankedGroup> rank_sweep_rows(const std::vector<SweepRow>& rows) {
  std::vector<const SweepRow*> usable;
  for (const auto& row : rows)
    if (row.ok) usable.push_back(&row);
  std::sort(usable.begin(), usable.end(), read_before);

  // Groups in the order of their first row; within a group, rows by size in read order.
  std::vector<RankedGroup> groups;
  std::vector<std::map<std::uint64_t, std::vector<const SweepRow*>>> by_size;
  std::map<std::string, std::size_t> index;
  for (const SweepRow* row : usable) {
    json sets = machine_sets(row->sets);
    std::string key = json::array({row->topology, row->collective, sets}).dump();
    auto [it, inserted] = index.emplace(key, groups.size());
    if (inserted) {
      groups.push_back({row->topology, row->collective, sets, {}});
      by_size.emplace_back();
    }
    by_size[it->second][row->bytes].push_back(row);
  }
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (const auto& [bytes, candidates] : by_size[g]) {
      const SweepRow* best = candidates.front();
      for (const SweepRow* row : candidates)
        if (row->time_s < best->time_s) best = row;  // strict: ties keep the row read first
      const SweepRow* runner = nullptr;
      for (const SweepRow* row : candidates)
        if (row->algorithm != best->algorithm && (!runner || row->time_s < runner->time_s)) runner = row;
      groups[g].sizes.push_back({bytes, best, runner});
    }
  return groups;
}

std::vector<TuneTable> build_tuning_tables(const std::vector<SweepRow>& rows) {
  std::vector<RankedGroup> groups = rank_sweep_rows(rows);
  if (groups.empty())
    throw InputError("no usable rows: none has status ok and verified true (" + std::to_string(rows.size()) +
                     " rows read)");
  std::vector<TuneTable> tables;
  for (const auto& group : groups) {
    TuneTable table{group.topology, group.collective, group.sets, {}};
    for (const auto& [bytes, best, runner] : group.sizes) {
      json parameters = own_parameters(*best);
      if (table.ranges.empty() || table.ranges.back().algorithm != best->algorithm ||
          table.ranges.back().parameters != parameters) {
        if (!table.ranges.empty()) table.ranges.back().to_bytes = bytes - 1;
        table.ranges.push_back({bytes, bytes, bytes, best->algorithm, parameters, {}, {}, {}});
      }
      TuneRange& range = table.ranges.back();
      range.to_bytes = range.sampled_to_bytes = bytes;
      range.busbw_GBps = best->busbw_GBps;
      range.runner_up = runner ? std::optional<std::string>(runner->algorithm) : std::nullopt;
      range.margin =
          runner && best->time_s > 0 ? std::optional<double>(runner->time_s / best->time_s) : std::nullopt;
    }
    tables.push_back(std::move(table));
  }
  return tables;
}

nlohmann::ordered_json tuning_json(const std::vector<TuneTable>& tables, const std::string& version,
                                   const std::string& command) {
  nlohmann::ordered_json out{{"schema_version", 1}, {"version", version}, {"command", command}};
  auto& list = out["tables"] = nlohmann::ordered_json::array();
  for (const auto& table : tables) {
    nlohmann::ordered_json ranges = nlohmann::ordered_json::array();
    for (const auto& r : table.ranges)
      ranges.push_back({{"from_bytes", r.from_bytes},
                        {"to_bytes", r.to_bytes},
                        {"sampled_to_bytes", r.sampled_to_bytes},
                        {"algorithm", r.algorithm},
                        {"parameters", r.parameters},
                        {"busbw_GBps", r.busbw_GBps},
                        {"runner_up", r.runner_up ? nlohmann::ordered_json(*r.runner_up) : nullptr},
                        {"margin", r.margin ? nlohmann::ordered_json(*r.margin) : nullptr}});
    list.push_back({{"topology", table.topology},
                    {"collective", table.collective},
                    {"sets", table.sets},
                    {"ranges", ranges}});
  }
  return out;
}

std::string tuning_text(const std::vector<TuneTable>& tables) {
  std::string out;
  char line[256];
  for (const auto& table : tables) {
    if (!out.empty()) out += "\n";
    out += table.topology + " " + table.collective;
    if (!table.sets.empty()) out += " (" + assignments(table.sets) + ")";
    out += "\n";
    std::snprintf(line, sizeof line, "  %-24s %-32s %10s  %s\n", "sizes", "algorithm", "busbw GB/s",
                  "runner-up (time ratio)");
    out += line;
    for (std::size_t i = 0; i < table.ranges.size(); ++i) {
      const TuneRange& r = table.ranges[i];
      const bool last = i + 1 == table.ranges.size();
      std::string sizes = "[" + size_text(r.from_bytes) + ", " +
                          (last ? size_text(r.to_bytes) + "]" : size_text(r.to_bytes + 1) + ")");
      std::string algorithm = r.algorithm;
      if (!r.parameters.empty()) algorithm += " " + assignments(r.parameters);
      char busbw[32] = "-";
      if (r.busbw_GBps.is_number()) std::snprintf(busbw, sizeof busbw, "%.2f", r.busbw_GBps.get<double>());
      std::string runner = "-";
      if (r.runner_up) {
        char margin[32] = "";
        if (r.margin) std::snprintf(margin, sizeof margin, " (%.2fx)", *r.margin);
        runner = *r.runner_up + margin;
      }
      std::snprintf(line, sizeof line, "  %-24s %-32s %10s  %s\n", sizes.c_str(), algorithm.c_str(), busbw,
                    runner.c_str());
      out += line;
    }
  }
  return out;
}

}  // namespace ultrasim
