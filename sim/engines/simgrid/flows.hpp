// Flows: the SimGrid comms that carry a message's bytes, and where they start. A Flow is one comm on one
// path plus the latency its delivery adds (SimGrid's links carry none: sim/DESIGN.md). The FlowStarter
// starts a flow from a chip to one of another chip's endpoints (its chip host or chip<b>#k: the caller
// picks it, from the message's path and routing epoch) and between any two hosts (the legs of in-switch
// reductions); it gives every endpoint an inbox drained by a sink actor, so that a chip's own flows are
// mailbox puts. It knows nothing of messages, matching, epochs or records. Calls come from the actors of
// one simulation, one at a time (or before run()): no locking.
#pragma once

#include <cstdint>
#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/engines/records.hpp"
#include "sim/engines/simgrid/platform.hpp"

namespace ultrasim {

struct Flow {
  simgrid::s4u::CommPtr comm;
  double latency = 0;  // path latency + transfer_overhead, added at delivery
  int path = 0;        // path index (0 = the route) in its epoch's path set of the pair
  std::uint64_t bytes = 0;
  int epoch = 0;  // the routing epoch it was started in (faults; 0 = the fault-free routes)
};

// Whether SimGrid has ended the flow: it sets an activity's finish time (-1 before) when it processes
// the end of its action, before it answers any wait. Reading it costs no simcall, where a wait on an
// ended comm costs one and a context switch.
inline bool has_ended(const simgrid::s4u::Comm& flow) {
  return flow.get_finish_time() >= 0;
}

// Waits for a flow. A flow cancelled by a routing epoch (RoutingEpochs::begin, which starts its
// replacement first) returns here too.
void wait_flow(const simgrid::s4u::CommPtr& flow);

// The record of an ended flow from src to dst (-1 on the switch's side of an in-switch reduction leg,
// with `sw` the switch): on the wire from its start to its end, delivered its latency later.
TransferRecord delivered_record(const Flow& flow, int src, int dst, int step, int sw = -1);

class FlowStarter {
 public:
  // `transfer_overhead` is added to every flow's path latency.
  FlowStarter(Platform& platform, int chips, double transfer_overhead);

  // Gives every chip endpoint (the chip host, and chip<r>#k of each further plane) an inbox whose
  // permanent receiver is a daemon "sink" actor on that host, so that a put starts its flow at once
  // (one-sided). An inbox keeps every ended comm until someone takes it (1.4 GB for the 2.65 M transfers
  // of a 1152-chip ring), and taking each as it ends would cost two simcalls per flow: so the sink sleeps
  // on a condition variable, is woken once every kDrainEvery puts into its inbox, and then takes the
  // ended comms from the inbox's head in one go, oldest first, up to the first still running. It must not be
  // suspended instead: SimGrid suspends the comms of a suspended actor. Call once, before run(); without it
  // every flow is a host-to-host comm.
  void start_sinks();

  // A flow of `bytes` from chip src's host to chip dst's endpoint `endpoint`, started now and labelled
  // with its path index and routing epoch. From the source chip's own actor (with sinks) it is a put to
  // that endpoint's inbox; from another actor, a host-to-host comm along the same route. Both start at
  // once and cost the same; puts avoid 3.32's O(flows in flight) bookkeeping of host-to-host comms (one
  // global list scanned at every completion: 250 s instead of 2 s for a 288-chip all-to-all).
  Flow start(int src, int dst, std::uint64_t bytes, int endpoint, int path, int epoch);
  // A host-to-host flow of `bytes` between any two hosts (path 0, epoch 0), started now.
  Flow start_between(simgrid::s4u::Host* from, simgrid::s4u::Host* to, std::uint64_t bytes);

  Platform& platform() const { return platform_; }

 private:
  struct Inbox {
    simgrid::s4u::Mailbox* mailbox = nullptr;
    simgrid::s4u::ConditionVariablePtr wake;  // the sink's
    std::uint64_t puts = 0;
  };
  static constexpr std::uint64_t kDrainEvery = 256;

  Platform& platform_;
  double transfer_overhead_;
  int chips_ = 0, max_endpoints_ = 1;
  // Path latency + transfer_overhead of the flows from chip a to endpoint k of chip b, at (a p + b) K + k
  // (NaN: not yet looked up); K = the most endpoints a chip has.
  std::vector<double> flow_latency_;
  std::vector<std::vector<Inbox>> inbox_;  // per rank, per endpoint; empty without sinks
};

}  // namespace ultrasim
