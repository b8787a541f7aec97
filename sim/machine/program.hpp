// What every engine runs, whatever the workload: a machine (the built topology, its routes, the faults
// planned on it) and a program that each chip runs over the engine's Transport, then checks what the
// chips did. A collective (workloads/collective/collective_program.hpp), an MoE layer
// (workloads/moe/moe_layer.hpp), a training step (workloads/training/training.hpp), a Chakra trace and a
// ping-pong are programs; the engines (sim/engines/: simulate() and the table) know nothing else of them,
// and live a floor above this one. A new workload is a Program plus its reader and result
// (workloads/registry.hpp): no engine changes.
//
// The engine calls run() once per chip, on that chip's actor or fiber, one chip at a time (never
// concurrently), wrapping the transport for stragglers first (a late chip idles until its start; a slow
// one's computations take longer: sim/machine/faults.hpp). Once every chip has finished, it calls
// verdict(). A chip's run() may be called again (`--engine auto` reruns on the flow engine or SimGrid a
// program the contention-free engine declined): it overwrites what an earlier call kept.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collectives/algorithm.hpp"
#include "collectives/collective.hpp"
#include "collectives/stack.hpp"
#include "collectives/traffic_matrix.hpp"
#include "collectives/transport.hpp"
#include "sim/machine/faults.hpp"
#include "topology/base/params.hpp"
#include "topology/routing.hpp"

namespace ultrasim {

// The fabric a workload runs on: the topology with the hardware's and the model's parameters, the
// routes of every chip pair, the faults resolved against the topology (an empty plan: a fault-free run),
// and the software stack it runs under with the protocol in effect (collectives/stack.hpp). The protocol
// is in the topology already: its links' efficiency is scaled by the protocol's, and the chip links of
// the scale-out tier carry its network step latency (half each).
struct Machine {
  std::unique_ptr<Topology> topology;
  std::unique_ptr<Routes> routes;
  FaultPlan faults;
  double in_flight_per_chip = 0;  // messages one chip may have in flight at worst (the memory guard's)
  std::shared_ptr<const Stack> stack;
  Protocol protocol;
  int channels_open = 0;  // of the protocol's channels (0: it has none)
  // What the links' rates were scaled by: the protocol's efficiency x the share its open channels get.
  double link_scale() const { return protocol.efficiency * protocol.share(channels_open); }
  int p() const { return topology->chip_count(); }
  // What every transfer costs beyond its path: the model's transfer_overhead + the protocol's step latency.
  double transfer_overhead() const;
  // Whether the protocol changed the topology's links: scaled their efficiency, or added its network
  // latency to a scale-out tier the topology has.
  bool protocol_changes_links() const;
  // What a closed-form cost of `bytes` (alltoallv: of `traffic`) on every chip needs: the routes' α and β,
  // transfer_overhead() and the model's reduce_bandwidth.
  CostInput cost_input_of(std::uint64_t bytes, const TrafficMatrix* traffic = nullptr) const;
};

// The stack and protocol a machine ran `algorithm` under, for results: {"name", "origin", "protocol",
// "launch_latency_s" (the algorithm's), "step_latency_s", "network_step_latency_s", "efficiency", and with
// channels "channels": {"open", "of"}}.
nlohmann::json stack_json(const Machine& machine, const std::string& algorithm);

// The stack a topology runs under: its parameter `stack` (a built-in name or a FILE.json; "auto": the
// topology's default_stack()). Throws InputError for an unknown one.
std::shared_ptr<const Stack> stack_of(const Topology& topology);
// The protocol the parameter `protocol` names on `stack`; "auto" outside a collective's own choice
// (workloads/collective/collective_job.hpp) is the stack's bulk protocol: the highest efficiency, ties to the
// later.
const Protocol& protocol_of(const Stack& stack, const std::string& word);

// Builds topology `spec` with the model's parameters (model_params) and `overrides` (--set; a name neither
// declares is an InputError with "did you mean" over those and `other_names`, the names other owners
// declare), applies the stack's protocol (the stack `stack`, else the parameter's; the protocol `protocol`,
// else the parameter's; its links at the protocol's efficiency x the share of its channels a collective
// opens, `channels_open` (0: all of them): Protocol::share()), checks that the run fits in
// memory with its flows in the flow engine (sim/machine/memory_guard.hpp; `posts_to_all`: a chip may have a
// message to every other in flight at once; simulate() checks again for SimGrid if SimGrid is to run it),
// then builds the routes. Its fault plan is empty.
Machine build_machine(const std::string& spec,
                      const std::vector<std::pair<std::string, std::string>>& overrides,
                      const std::vector<std::string>& other_names, bool posts_to_all,
                      const std::string& protocol = {}, std::shared_ptr<const Stack> stack = nullptr,
                      int channels_open = 0);

// A part of `whole`: its chips first..last as the chips of a machine of their own, rank r being whole's
// chip first + r; the other chips stay in the fabric with their links but are no endpoints (what the spec
// SPEC@first-last builds, and named so). The topology is whole's, copied (its parameters, stack and
// protocol with it), not built again; the routes are the part's own. Checks the memory guard as
// build_machine does.
Machine select_chips(const Machine& whole, int first, int last, bool posts_to_all);

// Checks --check-engine's N (how many of a workload's exchanges to run on the fast and the exact engine,
// sim/engines/runner.hpp) against the exchanges the workload has (`available`; `what` says which they
// are): InputError "--check-engine N: ..." unless 1 <= N <= available.
void check_engine_count(int n, int available, const std::string& what);

// A program that is a chain of all-to-allv exchanges (an MoE layer: dispatch, expert compute, combine), in
// the form the traffic-matrix engine prices without running the chips (sim/engines/matrix/): chip r
// sends row r of phase 0's matrix at its start, and row r of phase k + 1's once every byte phase k sent
// it has arrived, plus `gap_s[r]` of its own work (its compute between the phases, which stragglers
// stretch). A chip has finished when the last phase's bytes have reached it and every byte it sent has
// left. The matrices are the program's own (they outlive the run).
struct MatrixPhase {
  const TrafficMatrix* matrix = nullptr;
  int step = 0;               // the records' step label
  std::vector<double> gap_s;  // per chip, s, before it sends this phase (empty: none)
  std::string gap_what;       // what that work is, for the compute records
};

class Program {
 public:
  virtual ~Program() = default;
  // Whether chip `rank` takes part; one that does not finishes at time 0, its stragglers' faults unused.
  virtual bool takes_part(int rank) const { return true; }
  // Chip transport.rank()'s part, over `transport`; keeps what verdict() checks. Throws (any exception) to
  // fail the chip: the engine reports it as the run's failure.
  virtual void run(Transport& transport) = 0;
  // Once every chip has finished: whether the chips hold what the workload promises.
  virtual Verdict verdict() const = 0;
  // Why the program cannot run while links fail (link-down, switch-down), as the error says it; empty if
  // it can.
  virtual std::string link_fault_refusal() const { return {}; }
  // The program as a chain of exchanges (MatrixPhase), or empty if it is none: the traffic-matrix
  // engine then declines it, naming `matrix_refusal()`.
  virtual std::vector<MatrixPhase> matrix_form() const { return {}; }
  virtual std::string matrix_refusal() const { return not_an_exchange("this program"); }
  // "it prices exchanges of a traffic matrix (...), not WHAT": what the engine says of other programs.
  static std::string not_an_exchange(const std::string& what) {
    return "it prices exchanges of a traffic matrix (MoE layers, direct all-to-all and all-to-allv), not " +
           what;
  }
};

}  // namespace ultrasim
