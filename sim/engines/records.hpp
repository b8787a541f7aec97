// What a run produces, whichever engine ran it (engines.hpp's table): per-flow and per-compute records, the
// result, and the options that choose the engine. Free of SimGrid.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "collectives/collective.hpp"
#include "topology/base/options.hpp"

namespace ultrasim {

// One flow of a message: a whole message, or one sub-flow of a striped one (one record per path).
struct TransferRecord {
  int src = 0, dst = 0;
  std::uint64_t bytes = 0;  // carried by this flow
  int step = 0;
  int path = 0;         // index in the pair's path set (0 = default route)
  double start = 0;     // flow start, s
  double end = 0;       // delivery: wire_end + path latency (+ transfer_overhead), s
  double wire_end = 0;  // flow end: its last byte has left the links (they carry it on [start, wire_end])
  int epoch = 0;        // routing epoch of its path (link faults; 0 = the fault-free routes)
  // Cut by a link failure while in flight: `bytes` are what it had carried by then (wire_end = end =
  // the failure); the message was sent again whole, as new records on the detour.
  bool cancelled = false;
  // In-switch reduction (switch-reduce): the switch, as an index into Topology::switches(), of an upload
  // from chip src to it (dst = -1) or of a download from it to chip dst (src = -1); -1 for a flow
  // between two chips.
  int sw = -1;
};

struct ComputeRecord {
  int chip = 0;
  std::string what;
  double start = 0, end = 0;
};

// Which engine evaluates a run; each is a row of sim/engines/engines.hpp, which says what it models.
// `contention-free` computes every flow at its path's bottleneck rate without SimGrid and proves afterwards
// that no link direction ever carried two flows at once, which makes those times exactly SimGrid's max-min
// ones (sim/DESIGN.md); `flow` computes SimGrid's max-min sharing without SimGrid; `fast` is the flow
// engine with rates re-solved once per window instead of at every flow end, within a documented error.
// `auto` tries contention-free, then RunOptions::contended when the proof fails, and SimGrid when the run
// needs what only SimGrid models (in-switch reduction, link faults, a platform file, settings).
enum class Engine { kAuto, kSimGrid, kContentionFree, kFlow, kFast, kMatrix };
// Their names, in the table's order (engines.hpp: each row is named from here): what --engine, a workload
// file's "engine" and a result's "engine" say. Read without the engines themselves (records.cpp), so that
// a reader of options (the fuzzers') can check an engine's name.
struct EngineName {
  Engine id;
  std::string name;
};
const std::vector<EngineName>& engine_names();

// SimGrid's `surf/precision` as our configuration sets it (sim/engines/simgrid/platform.cpp), in seconds:
// SimGrid ends a sleep at the first event that leaves less than this of it, and the flow engine does the
// same.
inline constexpr double kSimGridPrecision = 1e-13;
// An engine's name in the table (sim/engines/engines.hpp); throws InputError ("did you mean") otherwise.
Engine parse_engine(const std::string& name);
const char* engine_name(Engine engine);
// "auto|contention-free|flow|fast|simgrid": the names, for --engine's help.
std::string engine_choices();

// The engine option, declared once (topology/base/options.hpp) for every workload and command that takes
// one: `--engine NAME` and a workload file's "engine", a row of the table, checked as it is read
// (parse_engine's "did you mean"), into `field` (a text field, or an Engine). `auto_does` says what auto
// does for that workload, for --help, `ultrasim list options` and the reference.
template <class Config, class Field>
Option<Config> engine_option(Field field, const std::string& auto_does) {
  Option<Config> o{"engine", engine_choices(),
                   "what computes how transfers share the fabric (ultrasim list engines); auto: " + auto_does,
                   "sim/README.md#engines"};
  o.set = [field](Config& c, const nlohmann::json& v, const std::string& where) {
    const std::string name = option_text(v, where);
    const Engine engine = parse_engine(name);
    auto& f = std::invoke(field, c);
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(f)>, Engine>)
      f = engine;
    else
      f = name;
  };
  o.value = [field](const Config& c) {
    const auto& f = std::invoke(field, c);
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(f)>, Engine>)
      return nlohmann::json(engine_name(f));
    else
      return nlohmann::json(f.empty() ? std::string("auto") : f);
  };
  return o;
}
// The help of a command's own --engine flag (one that is no table's), from the same declaration.
std::string engine_help(const std::string& auto_does);

struct RunOptions {
  std::string platform_file;  // load this exported SimGrid XML instead of building the platform
  bool record = false;        // keep a record per transfer and compute interval (traces)
  // Extra SimGrid settings "name:value", applied after ultrasim's own (advanced; may break exactness).
  std::vector<std::string> simgrid_config;
  Engine engine = Engine::kAuto;
  // What `auto` runs a contended run on: the exact flow engine (a collective, one MoE layer), or the fast
  // one where thousands of exchanges are simulated (serving steps, frontiers, tails).
  Engine contended = Engine::kFlow;
  // Whether `auto` may hand a run to SimGrid (what only SimGrid models; a failed run, for SimGrid's own
  // words). False in a process that simulates many runs (serving: SimGrid runs once per process): there
  // auto's last word is the contended engine's, and what it declines is a SimulationError.
  bool simgrid_fallback = true;
};

struct SimResult {
  double time_s = 0;  // when the last chip finished
  Verdict verdict;
  std::uint64_t transfers = 0, bytes_sent = 0;
  std::vector<TransferRecord> transfer_records;  // with RunOptions::record, sorted by (start, src, dst)
  std::vector<ComputeRecord> compute_records;
  std::vector<double> chip_finish;   // per chip, when its program ended, s (time_s is the latest)
  Engine engine = Engine::kSimGrid;  // the one that produced this result (never kAuto)
  // Link faults: flows in flight across a link when it failed, cancelled and sent again on a detour,
  // and their bytes (counted again; bytes_sent counts each message once).
  std::uint64_t restarted_flows = 0, resent_bytes = 0;
};

}  // namespace ultrasim
