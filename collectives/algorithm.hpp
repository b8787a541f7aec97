// The algorithm interface and the registry table of algorithms (`ultrasim list algorithms`, lookup,
// "did you mean"). Adding an algorithm = one file defining its entry function + one row in registry.cpp
// (CMakeLists.txt compiles every .cpp of the folder).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/chip.hpp"
#include "collectives/collective.hpp"
#include "topology/base/param_table.hpp"
#include "topology/base/params.hpp"
#include "topology/routing.hpp"

namespace ultrasim {

// The range of every algorithm's pipeline_chunks: a chunk count past 4096 buys nothing the simulator can
// show (NCCL cuts a ring step in at most a few slices) and costs chunks x flows messages.
inline constexpr Range kPipelineChunks{1, 4096};

// The pipelining parameter (pipeline_chunks) as an algorithm reads it; each algorithm declares its own
// default and meaning in its table (ring_pipeline_table, pipeline_chunks_table, ...).
struct PipelineParams {
  int chunks = 1;  // pipeline_chunks: pieces or chunks a buffer or a step is cut into
};

// What a closed-form cost needs: the collective's size and chunks, and per-pair α and β on the
// topology it runs on. α(a, b) = route latency + transfer_overhead; bandwidth(a, b) = route bottleneck.
struct CostInput {
  const Routes& routes;
  int p = 1;
  std::uint64_t bytes = 0;
  double transfer_overhead = 0;            // s added to every transfer
  std::optional<double> reduce_bandwidth;  // nullopt: reductions are free
  const TrafficMatrix* traffic = nullptr;  // alltoallv's per-pair bytes; null: the uniform one of `bytes`
  // A group of chips (communicator): local rank r is chip members[r]; empty: every chip, r is the chip.
  std::vector<int> members = {};
  int chip(int r) const { return members.empty() ? r : members[r]; }
  double alpha(int a, int b) const { return routes.route_latency(chip(a), chip(b)) + transfer_overhead; }
  // A message's rate under the routes' multi-path policy (striped: over its whole path set).
  double bandwidth(int a, int b) const { return routes.message_bandwidth(chip(a), chip(b)); }
  double reduce_time(std::uint64_t n) const { return reduce_bandwidth ? n / *reduce_bandwidth : 0.0; }
  TrafficMatrix traffic_matrix() const { return traffic ? *traffic : TrafficMatrix::uniform(bytes, p); }
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  // How many chunks (slots) the buffer is cut into: any number for all-reduce, broadcast and reduce, a
  // multiple of p for all-gather and reduce-scatter (each chip's part cut into chunks/p); all-to-all uses p.
  virtual int chunks(int p) const { return p; }
  // Called once with the topology the algorithm will run on, before chunks, run and model_s (not on the
  // recording fake). Algorithms that follow the topology's structure (hierarchical groups) read it here;
  // throws InputError when the topology lacks what the algorithm's parameters ask for.
  virtual void place(const Topology& topology) {}
  // Whether it can run on a group of chips (a communicator: workloads/collective/groups.hpp). Algorithms
  // placed on the whole topology's structure (hierarchical levels, the switch every chip hangs off) cannot.
  virtual bool runs_on_groups() const { return true; }
  // The per-chip program: runs on every chip's actor with that chip's view.
  virtual void run(Chip& me) const = 0;
  // The closed-form α-β cost on the given topology, without contention (formula in the header).
  virtual double model_s(const CostInput& in) const = 0;
};

struct AlgorithmEntry {
  std::string collective;   // "allreduce"
  std::string name;         // "ring"
  std::string description;  // one line
  // Builds the algorithm from the parameters in effect (its own `params` among them).
  std::function<std::unique_ptr<Algorithm>(const ParamSet& params)> make;
  std::vector<ParamSpec> params = {};  // its own parameters, settable with --set (e.g. pipeline depth)
  // Whether a chip may have a message to every other in flight at once (direct exchanges, one-shot,
  // schedules): the memory guard (sim/machine/memory_guard.hpp) then counts p - 1 flows per chip.
  bool posts_to_all = false;
  // Whether it reduces in the switches (Transport::switch_reduce): only the SimGrid engine models that,
  // so an engine named for it is refused before anything is built.
  bool in_switch_reduction = false;
  std::unique_ptr<Algorithm> make_with_defaults() const { return make(ParamSet(params)); }
};

const std::vector<AlgorithmEntry>& algorithms();
// Throws InputError "unknown algorithm 'rign' for allreduce; did you mean 'ring'? known: ...".
const AlgorithmEntry& find_algorithm(const std::string& collective, const std::string& name);

}  // namespace ultrasim
