#include "collectives/stack.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

#include "collectives/algorithm.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {

// The files of collectives/stacks/, by file name, generated into the build (CMakeLists.txt).
const std::vector<std::pair<std::string_view, std::string_view>>& builtin_stack_files();

namespace {

const char* const kStackFields[] = {"name",      "description", "selection",
                                    "protocols", "algorithms",  "algorithms_source"};
const char* const kProtocolFields[] = {
    "name",       "launch_latency", "step_latency", "network_step_latency",
    "efficiency", "excludes",       "source",       "launch_latency_by_algorithm",
    "channels"};
const char* const kChannelFields[] = {"count", "bytes", "bytes_per_rank"};

void check_fields(const nlohmann::json& object, const auto& known, const std::string& where) {
  for (const auto& [key, value] : object.items())
    if (std::find(std::begin(known), std::end(known), key) == std::end(known))
      throw InputError(where + ": unknown field '" + key + "'");
}

std::string text_field(const nlohmann::json& object, const char* key, const std::string& where) {
  if (!object.contains(key) || !object.at(key).is_string() || object.at(key).get<std::string>().empty())
    throw InputError(where + ": field '" + key + "' must be a non-empty string");
  return object.at(key).get<std::string>();
}

// A latency: a string with its unit ("6.6us"), at most 1 s.
double latency_field(const nlohmann::json& object, const char* key, const std::string& where) {
  const std::string text = text_field(object, key, where);
  double seconds = 0;
  try {
    seconds = parse_time(text);
  } catch (const InputError& e) {
    throw InputError(where + ": field '" + key + "': " + e.what());
  }
  if (seconds > 1)
    throw InputError(where + ": field '" + key + "' is " + text + "; a stack's latencies are at most 1s");
  return seconds;
}

Protocol parse_protocol(const nlohmann::json& p, const std::string& where) {
  if (!p.is_object()) throw InputError(where + ": must be an object");
  check_fields(p, kProtocolFields, where);
  Protocol protocol;
  protocol.name = text_field(p, "name", where);
  protocol.launch_latency = latency_field(p, "launch_latency", where);
  protocol.step_latency = latency_field(p, "step_latency", where);
  protocol.network_step_latency = latency_field(p, "network_step_latency", where);
  if (!p.contains("efficiency") || !p.at("efficiency").is_number())
    throw InputError(where + ": field 'efficiency' must be a number in (0, 1]");
  protocol.efficiency = p.at("efficiency").get<double>();
  if (!(protocol.efficiency > 0 && protocol.efficiency <= 1))
    throw InputError(where + ": field 'efficiency' is " + json_text(p.at("efficiency")) +
                     "; it must be in (0, 1]");
  if (p.contains("launch_latency_by_algorithm")) {
    const nlohmann::json& by = p.at("launch_latency_by_algorithm");
    if (!by.is_object())
      throw InputError(where + ": field 'launch_latency_by_algorithm' must map algorithms to latencies");
    for (const auto& [algorithm, value] : by.items())
      protocol.launch_by_algorithm[algorithm] =
          latency_field(by, algorithm.c_str(), where + ": launch_latency_by_algorithm");
  }
  if (p.contains("excludes")) {
    if (!p.at("excludes").is_array())
      throw InputError(where + ": field 'excludes' must list algorithm names");
    for (const auto& name : p.at("excludes")) {
      if (!name.is_string() || name.get<std::string>().empty())
        throw InputError(where + ": field 'excludes' must list algorithm names");
      protocol.excludes.push_back(name.get<std::string>());
    }
  }
  if (p.contains("channels")) {
    const nlohmann::json& c = p.at("channels");
    const std::string at = where + ": channels";
    if (!c.is_object()) throw InputError(at + ": must be an object {count, bytes, bytes_per_rank}");
    check_fields(c, kChannelFields, at);
    if (!c.contains("count") || !c.at("count").is_number_integer() || c.at("count").get<long long>() < 1 ||
        c.at("count").get<long long>() > 1024)
      throw InputError(at + ": field 'count' must be an integer from 1 to 1024");
    protocol.channels = c.at("count").get<int>();
    auto bytes = [&](const char* key) {
      if (!c.contains(key)) return 0.0;
      try {
        return static_cast<double>(parse_bytes(text_field(c, key, at)));
      } catch (const InputError& e) {
        throw InputError(at + ": field '" + key + "': " + e.what());
      }
    };
    protocol.channel_bytes = bytes("bytes");
    protocol.channel_bytes_per_rank = bytes("bytes_per_rank");
  }
  protocol.source = text_field(p, "source", where);
  return protocol;
}

}  // namespace

bool Stack::offers(const std::string& collective, const std::string& algorithm) const {
  const auto it = algorithms.find(collective);
  return it == algorithms.end() ||
         std::find(it->second.begin(), it->second.end(), algorithm) != it->second.end();
}

const Protocol& Stack::protocol(const std::string& wanted) const {
  std::vector<std::string> known;
  for (const Protocol& p : protocols) {
    if (p.name == wanted) return p;
    known.push_back(p.name);
  }
  throw InputError(unknown_name_message("protocol of stack " + name, wanted, known));
}

nlohmann::json Stack::to_json() const {
  nlohmann::json out{{"name", name}, {"description", description}, {"selection", "lowest-model"}};
  out["protocols"] = nlohmann::json::array();
  for (const Protocol& p : protocols)
    out["protocols"].push_back({{"name", p.name},
                                {"launch_latency_s", p.launch_latency},
                                {"step_latency_s", p.step_latency},
                                {"network_step_latency_s", p.network_step_latency},
                                {"efficiency", p.efficiency},
                                {"excludes", p.excludes},
                                {"launch_latency_by_algorithm_s", p.launch_by_algorithm},
                                {"source", p.source}});
  for (std::size_t i = 0; i < protocols.size(); ++i)
    if (const Protocol& p = protocols[i]; p.channels > 0)
      out["protocols"][i]["channels"] = {
          {"count", p.channels}, {"bytes", p.channel_bytes}, {"bytes_per_rank", p.channel_bytes_per_rank}};
  if (!algorithms.empty()) out["algorithms"] = algorithms, out["algorithms_source"] = algorithms_source;
  return out;
}

std::string Stack::file_text() const {
  auto time = [](double seconds) { return shortest_number(seconds) + "s"; };
  nlohmann::ordered_json j{{"name", name}, {"description", description}, {"selection", "lowest-model"}};
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Protocol& p : protocols) {
    nlohmann::ordered_json protocol{{"name", p.name}, {"launch_latency", time(p.launch_latency)}};
    if (!p.launch_by_algorithm.empty()) {
      nlohmann::ordered_json by = nlohmann::ordered_json::object();
      for (const auto& [algorithm, seconds] : p.launch_by_algorithm) by[algorithm] = time(seconds);
      protocol["launch_latency_by_algorithm"] = by;
    }
    protocol["step_latency"] = time(p.step_latency);
    protocol["network_step_latency"] = time(p.network_step_latency);
    protocol["efficiency"] = p.efficiency;
    if (!p.excludes.empty()) protocol["excludes"] = p.excludes;
    if (p.channels > 0)
      protocol["channels"] = {{"count", p.channels},
                              {"bytes", shortest_number(p.channel_bytes)},
                              {"bytes_per_rank", shortest_number(p.channel_bytes_per_rank)}};
    protocol["source"] = p.source;
    list.push_back(protocol);
  }
  j["protocols"] = list;
  if (!algorithms.empty()) j["algorithms"] = algorithms, j["algorithms_source"] = algorithms_source;
  return json_text(j, 2) + "\n";
}

Stack parse_stack(const std::string& text, const std::string& where, const std::string& origin) {
  nlohmann::json j;
  try {
    j = parse_json_input(text, where);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": not JSON: " + json_error_text(e));
  }
  if (!j.is_object()) throw InputError(where + ": a stack is a JSON object");
  check_fields(j, kStackFields, where);
  Stack stack;
  stack.name = text_field(j, "name", where);
  stack.description = text_field(j, "description", where);
  stack.origin = origin;
  if (j.contains("selection") && j.at("selection") != "lowest-model")
    throw InputError(where +
                     ": field 'selection' must be \"lowest-model\" (the protocol whose model is fastest)");
  if (!j.contains("protocols") || !j.at("protocols").is_array() || j.at("protocols").empty())
    throw InputError(where + ": field 'protocols' must be a non-empty list");
  for (std::size_t i = 0; i < j.at("protocols").size(); ++i) {
    Protocol p = parse_protocol(j.at("protocols")[i], where + ": protocols[" + std::to_string(i) + "]");
    for (const Protocol& other : stack.protocols)
      if (other.name == p.name) throw InputError(where + ": protocol '" + p.name + "' is listed twice");
    stack.protocols.push_back(std::move(p));
  }
  if (j.contains("algorithms")) {
    const nlohmann::json& a = j.at("algorithms");
    if (!a.is_object())
      throw InputError(where + ": field 'algorithms' must map collectives to lists of algorithms");
    if (!j.contains("algorithms_source"))
      throw InputError(where + ": field 'algorithms' needs 'algorithms_source'");
    stack.algorithms_source = text_field(j, "algorithms_source", where);
    for (const auto& [collective, names] : a.items()) {
      if (!names.is_array() || names.empty())
        throw InputError(where + ": algorithms." + collective + " must be a non-empty list of names");
      for (const auto& name : names) {
        if (!name.is_string()) throw InputError(where + ": algorithms." + collective + " must list names");
        try {
          find_algorithm(collective, name.get<std::string>());
        } catch (const InputError& e) {
          throw InputError(where + ": algorithms." + collective + ": " + e.what());
        }
        stack.algorithms[collective].push_back(name.get<std::string>());
      }
    }
  }
  return stack;
}

const std::vector<Stack>& builtin_stacks() {
  static const std::vector<Stack> stacks = [] {
    std::vector<Stack> out;
    for (const auto& [file, text] : builtin_stack_files())
      out.push_back(parse_stack(std::string(text), "built-in stack " + std::string(file), "built-in"));
    // ideal first, the rest by name.
    std::stable_partition(out.begin(), out.end(), [](const Stack& s) { return s.name == "ideal"; });
    return out;
  }();
  return stacks;
}

Stack find_stack(const std::string& name) {
  if (name.ends_with(".json")) {
    const std::string where = "stack file '" + name + "'";
    return parse_stack(read_input_file(name, where, "a stack (JSON)"), where, name);
  }
  return find_by_name(builtin_stacks(), name, "stack");
}

}  // namespace ultrasim
