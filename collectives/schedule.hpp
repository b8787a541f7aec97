// Schedules as data: a collective algorithm read from a JSON file (`ultrasim run --algorithm file:PATH`)
// instead of written in C++, so schedules from synthesis tools (TACCL, TE-CCL, MSCCL) or from papers can
// be simulated and verified like the built-in algorithms. The format (collectives/README.md, "Bring
// your own algorithm as data"):
//   {"collective": "allreduce", "chips": 8, "chunks": 8,
//    "steps": [[{"src": 0, "dst": 1, "chunk": 0, "op": "reduce"}, ...], ...]}
// A step lists transfers that run concurrently; `chunk` names a slot of the collective's layout
// (make_layout) at the sender and, unless `dst_chunk` says otherwise, at the receiver; `op` says what
// the receiver does with it: "reduce" (adds) or "copy" (overwrites).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collectives/algorithm.hpp"

namespace ultrasim {

struct ScheduleTransfer {
  int src = 0, dst = 0;
  int chunk = 0;      // the sender's slot
  int dst_chunk = 0;  // the receiver's slot (the file's "dst_chunk", else `chunk`)
  OnArrival op = OnArrival::kReduce;
};

struct Schedule {
  std::string source;  // the file, as named on the command line; prefixes every error about it
  std::string name;    // the optional "name" field ("" if absent); documentary
  const CollectiveInfo* collective = nullptr;
  int chips = 0;
  // What the layout is cut into (Algorithm::chunks): the file's "chunks" for allreduce, broadcast and
  // reduce; the chip count for the others (whose layouts have p or 2p slots).
  int chunks = 0;
  std::vector<std::vector<ScheduleTransfer>> steps;
};

// The slots a "chunk" may name: allreduce, broadcast, reduce `chunks`; allgather, reducescatter p;
// alltoall 2p (0..p-1 what a chip sends to each chip, p..2p-1 what it receives from each).
int schedule_slots(CollectiveKind kind, int chips, int chunks);

// The largest "chunks" a file may ask for (every chip holds that many slots).
constexpr int kMaxScheduleChunks = 1 << 16;

// Parses and validates a schedule. On any defect throws InputError "<source>: <what>", naming the step
// and transfer (counted from 0, as the file's arrays) where there is one: not JSON, a missing or
// unknown field, a wrong type, an unknown collective or op, src/dst/chunk out of range, a chip sending
// to itself, or two writes to one slot of one chip in one step that are not all reduces.
Schedule parse_schedule(const std::string& text, const std::string& source);
// Reads `path` and parses it; a file that cannot be read is an InputError too.
Schedule load_schedule(const std::string& path);

// The algorithm that runs `schedule` (see schedule_algorithm.cpp for its semantics and model_s). It must
// run on schedule.chips chips; the caller checks that.
std::unique_ptr<Algorithm> schedule_algorithm(std::shared_ptr<const Schedule> schedule);

// The prefix that selects a schedule file in --algorithm, and the registry-like entry for one: its
// name is "file:PATH" exactly as given, so a result names the file that produced it.
inline constexpr const char* kScheduleFilePrefix = "file:";
AlgorithmEntry schedule_entry(std::shared_ptr<const Schedule> schedule);

}  // namespace ultrasim
