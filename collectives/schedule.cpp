// The schedule loader: reads a JSON schedule and checks everything that can be checked without a
// topology, so that a bad file fails as one line naming the file, the step and the transfer.
#include "collectives/schedule.hpp"

#include <algorithm>
#include <cstdint>
#include <map>

#include <nlohmann/json.hpp>

#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/suggest.hpp"

namespace ultrasim {
namespace {

using nlohmann::json;

// Generous, and keeps 2p slots far from int overflow; no simulated fabric comes close.
constexpr int kMaxScheduleChips = 1 << 20;

// Where a defect is: the file, then "step k, transfer i" when inside one.
struct Where {
  const std::string& source;
  std::string place;  // "" (top level), "step 3", "step 3, transfer 5"
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(source + ": " + (place.empty() ? "" : place + ": ") + what);
  }
};

std::string quoted(const std::string& s) {
  return "\"" + s + "\"";
}

// A value as the file has it, cut short so that an error stays one readable line.
std::string shown(const json& value) {
  std::string text = value.dump();
  return text.size() <= 40 ? text : text.substr(0, 37) + "...";
}

void reject_unknown_fields(const json& object, const std::vector<std::string>& known, const Where& at) {
  for (const auto& [key, value] : object.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      at.fail(unknown_name_message("field", key, known));
}

const json& required(const json& object, const std::string& name, const Where& at) {
  auto it = object.find(name);
  if (it == object.end()) at.fail("missing " + quoted(name));
  return *it;
}

// An integer field within [lo, hi]; `range` explains the bounds in the error.
int integer_in(const json& value, const std::string& name, std::int64_t lo, std::int64_t hi,
               const std::string& range, const Where& at) {
  if (!value.is_number_integer()) at.fail(quoted(name) + " must be an integer, not " + shown(value));
  const bool too_large =
      value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(hi);
  if (too_large || value.get<std::int64_t>() < lo || value.get<std::int64_t>() > hi)
    at.fail(quoted(name) + " " + shown(value) + " is out of range: " + range);
  return static_cast<int>(value.get<std::int64_t>());
}

std::string string_field(const json& value, const std::string& name, const Where& at) {
  if (!value.is_string()) at.fail(quoted(name) + " must be a string, not " + shown(value));
  return value.get<std::string>();
}

json parse_json(const std::string& text, const Where& at) {
  try {
    return parse_json_input(text, at.source);
  } catch (const json::parse_error& e) {
    // nlohmann's own message may quote the offending bytes; say where instead, on one line.
    const std::size_t at_char = e.byte == 0 ? 0 : std::min<std::size_t>(e.byte - 1, text.size());
    const auto line = 1 + std::count(text.begin(), text.begin() + at_char, '\n');
    const std::size_t line_start = at_char == 0 ? std::string::npos : text.rfind('\n', at_char - 1);
    const std::size_t column = line_start == std::string::npos ? at_char + 1 : at_char - line_start;
    at.fail("not valid JSON (syntax error at line " + std::to_string(line) + ", column " +
            std::to_string(column) + ")");
  } catch (const json::out_of_range&) {  // a number too large for a double ("1E400")
    at.fail("not valid JSON (a number too large for a double)");
  }
}

bool cut_by_chunks(CollectiveKind kind) {
  return kind == CollectiveKind::kAllreduce || kind == CollectiveKind::kBroadcast ||
         kind == CollectiveKind::kReduce;
}

ScheduleTransfer parse_transfer(const json& t, const Schedule& s, int slots, const std::string& slot_text,
                                const Where& at) {
  if (!t.is_object()) at.fail("a transfer must be an object {src, dst, chunk, op}, not " + shown(t));
  reject_unknown_fields(t, {"src", "dst", "chunk", "dst_chunk", "op"}, at);
  const json& src = required(t, "src", at);
  const json& dst = required(t, "dst", at);
  const json& chunk = required(t, "chunk", at);
  const json& op = required(t, "op", at);
  const std::string chips = "chips are 0.." + std::to_string(s.chips - 1);
  ScheduleTransfer out;
  out.src = integer_in(src, "src", 0, s.chips - 1, chips, at);
  out.dst = integer_in(dst, "dst", 0, s.chips - 1, chips, at);
  if (out.src == out.dst) at.fail("chip " + std::to_string(out.src) + " sends to itself");
  out.chunk = integer_in(chunk, "chunk", 0, slots - 1, slot_text, at);
  out.dst_chunk = t.contains("dst_chunk")
                      ? integer_in(t["dst_chunk"], "dst_chunk", 0, slots - 1, slot_text, at)
                      : out.chunk;
  const std::string name = string_field(op, "op", at);
  if (name == "reduce") {
    out.op = OnArrival::kReduce;
  } else if (name == "copy") {
    out.op = OnArrival::kKeep;
  } else {
    at.fail(unknown_name_message("op", name, {"reduce", "copy"}));
  }
  return out;
}

}  // namespace

int schedule_slots(CollectiveKind kind, int chips, int chunks) {
  if (cut_by_chunks(kind)) return chunks;
  return kind == CollectiveKind::kAlltoall ? 2 * chips : chips;
}

Schedule parse_schedule(const std::string& text, const std::string& source) {
  const Where top{source, ""};
  const json doc = parse_json(text, top);
  if (!doc.is_object()) top.fail("expected a JSON object {collective, chips, chunks, steps}");
  reject_unknown_fields(doc, {"name", "description", "collective", "chips", "chunks", "steps"}, top);

  Schedule s;
  s.source = source;
  if (doc.contains("name")) s.name = string_field(doc["name"], "name", top);
  if (doc.contains("description")) string_field(doc["description"], "description", top);
  const std::string collective = string_field(required(doc, "collective", top), "collective", top);
  try {
    s.collective = &find_collective(collective);
  } catch (const InputError& e) {
    top.fail(e.what());
  }
  const CollectiveKind kind = s.collective->kind;
  s.chips = integer_in(required(doc, "chips", top), "chips", 1, kMaxScheduleChips,
                       "1.." + std::to_string(kMaxScheduleChips), top);
  if (cut_by_chunks(kind)) {
    s.chunks = integer_in(required(doc, "chunks", top), "chunks", 1, kMaxScheduleChunks,
                          "1.." + std::to_string(kMaxScheduleChunks), top);
  } else {
    s.chunks = s.chips;
    if (doc.contains("chunks") && doc["chunks"] != json(s.chips))
      top.fail("\"chunks\" is " + shown(doc["chunks"]) + ", but " + collective +
               " cuts the data into one part per chip (" + std::to_string(s.chips) + "); leave it out");
  }
  const int slots = schedule_slots(kind, s.chips, s.chunks);
  const std::string slot_text = collective + " on " + std::to_string(s.chips) + " chips" +
                                (cut_by_chunks(kind) ? " in " + std::to_string(s.chunks) + " chunks" : "") +
                                " has slots 0.." + std::to_string(slots - 1);

  const json& steps = required(doc, "steps", top);
  if (!steps.is_array()) top.fail("\"steps\" must be an array of steps, not " + shown(steps));
  if (steps.empty() && s.chips > 1)
    top.fail("\"steps\" is empty: " + std::to_string(s.chips) + " chips need at least one transfer to " +
             collective);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const Where in_step{source, "step " + std::to_string(k)};
    if (!steps[k].is_array()) in_step.fail("a step must be an array of transfers, not " + shown(steps[k]));
    auto& step = s.steps.emplace_back();
    // Who writes each (chip, slot) in this step: any number of reduces, or one copy alone.
    std::map<std::pair<int, int>, std::size_t> writer;
    for (std::size_t i = 0; i < steps[k].size(); ++i) {
      const Where at{source, in_step.place + ", transfer " + std::to_string(i)};
      ScheduleTransfer t = parse_transfer(steps[k][i], s, slots, slot_text, at);
      auto [it, first] = writer.emplace(std::make_pair(t.dst, t.dst_chunk), i);
      if (!first && (t.op == OnArrival::kKeep || step[it->second].op == OnArrival::kKeep))
        at.fail("chip " + std::to_string(t.dst) + " slot " + std::to_string(t.dst_chunk) +
                " is also written by transfer " + std::to_string(it->second) +
                " of this step; in one step a slot takes any number of reduces or a single copy");
      step.push_back(t);
    }
  }
  return s;
}

Schedule load_schedule(const std::string& path) {
  return parse_schedule(read_input_file(path, "schedule file '" + path + "'", "a JSON schedule"), path);
}

}  // namespace ultrasim
