#include "sim/trace.hpp"

#include <set>

namespace ultrasim {
namespace {

constexpr int kComputeTrack = 0;  // tid of a chip's compute track; tid 1 + d: its transfers to chip d

nlohmann::json metadata(const char* what, int pid, int tid, const std::string& name) {
  nlohmann::json event{{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", {{"name", name}}}};
  if (tid >= 0) event["tid"] = tid;
  return event;
}

}  // namespace

nlohmann::json chrome_trace(const PreparedJob& job, const SimResult& result, const nlohmann::json& run) {
  const Topology& t = *job.topology;
  nlohmann::json events = nlohmann::json::array();
  for (int r = 0; r < t.chip_count(); ++r) {
    events.push_back(metadata("process_name", r, -1, t.node(t.chip(r)).name));
    events.push_back(nlohmann::json{
        {"ph", "M"}, {"name", "process_sort_index"}, {"pid", r}, {"args", {{"sort_index", r}}}});
    events.push_back(metadata("thread_name", r, kComputeTrack, "compute"));
  }
  // Switches appear as named processes after the chips (their agents have no events yet).
  for (std::size_t k = 0; k < t.switches().size(); ++k)
    events.push_back(metadata("process_name", t.chip_count() + static_cast<int>(k), -1,
                              "switch " + t.node(t.switches()[k]).name));
  std::set<std::pair<int, int>> tracks;
  for (const auto& x : result.transfer_records)
    if (tracks.insert({x.src, x.dst}).second)
      events.push_back(metadata("thread_name", x.src, 1 + x.dst, "to " + t.node(t.chip(x.dst)).name));
  for (const auto& x : result.transfer_records) {
    events.push_back(
        {{"name", "step " + std::to_string(x.step)},
         {"cat", "transfer"},
         {"ph", "X"},
         {"pid", x.src},
         {"tid", 1 + x.dst},
         {"ts", x.start * 1e6},
         {"dur", (x.end - x.start) * 1e6},
         {"args", {{"src", x.src}, {"dst", x.dst}, {"bytes", x.bytes}, {"step", x.step}, {"path", x.path}}}});
  }
  for (const auto& c : result.compute_records)
    events.push_back({{"name", c.what},
                      {"cat", "compute"},
                      {"ph", "X"},
                      {"pid", c.chip},
                      {"tid", kComputeTrack},
                      {"ts", c.start * 1e6},
                      {"dur", (c.end - c.start) * 1e6}});
  return {{"traceEvents", events}, {"displayTimeUnit", "ns"}, {"otherData", run}};
}

}  // namespace ultrasim
