// Which paths a message's flows take, and what link faults change (sim/machine/faults.hpp). Routing epoch
// 0 is the fault-free routes under the job's multi-path policy; each later epoch (set up before run(), in
// order) has routes with its failed links down, whose path j of a pair ends at the destination's
// endpoint first_endpoint + j (the platform holds those routes: add_epoch_paths). A message starts one
// flow per path of the current epoch, its bytes cut by split_bytes (a chip's message to itself stays on
// epoch 0's loopback). With epochs, every message that may still have a flow in flight is kept (weakly);
// at an epoch's start every such flow crossing a link the epoch has down is cancelled and its bytes are
// sent again, whole, on the epoch's paths of its pair.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "sim/engines/simgrid/flows.hpp"
#include "sim/engines/simgrid/recorder.hpp"
#include "topology/routing.hpp"

namespace ultrasim {

// A message's flows, as the epochs see them: one per path taken (striped: several), parts summing to
// its bytes.
struct MessageFlows {
  int src = 0, dst = 0, step = 0;
  boost::container::small_vector<Flow, 1> flows;
};

class RoutingEpochs {
 public:
  // `routes` gives epoch 0's paths of each message (Routes::message_paths); null: the default route.
  RoutingEpochs(FlowStarter& flows, Recorder& recorder, const Routes* routes);

  // Adds the next epoch: its routes, and the first of the endpoints its paths arrive at.
  void add(const Routes* routes, int first_endpoint);
  // Starts the flows of `message` (src, dst and step set, no flows yet) of `bytes`, now, on the paths the
  // current epoch gives its pair; keeps it while it may have a flow in flight if there are epochs.
  template <class Sent>  // derived from MessageFlows
  void start(const std::shared_ptr<Sent>& message, std::uint64_t bytes) {
    start_flows(*message, bytes);
    if (!epoch_routes_.empty()) keep(message);
  }
  // Called at the epoch's start (from the fault actor, or before run() for one starting at 0): new flows
  // take its routes, and every flow still in flight across a link it has down is cancelled and started
  // again now, whole, on the epoch's paths of its pair (its bytes are resent). The replacements are in
  // the message's place before the old flows are cancelled: a cancel wakes the chip waiting for them.
  // When recording, each cancelled flow is recorded with the bytes it carried until now.
  void begin(int epoch);

  // Flows cancelled and started again so far, and their bytes. A waiter whose flows may have been
  // replaced looks at them again when restarted_flows() has moved.
  std::uint64_t restarted_flows() const { return restarted_flows_; }
  std::uint64_t resent_bytes() const { return resent_bytes_; }

 private:
  void start_flows(MessageFlows& message, std::uint64_t bytes);
  void keep(std::weak_ptr<MessageFlows> message);
  int endpoint_of(int epoch, int path) const;
  bool crosses_down(const MessageFlows& message, const Flow& flow, const Routes& now) const;
  // Replaces the flows of `message` that cross a link `now` has down; returns the comms to cancel.
  std::vector<simgrid::s4u::CommPtr> restart_crossing(MessageFlows& message, const Routes& now, int epoch);

  FlowStarter& flows_;
  Recorder& recorder_;
  const Routes* routes_;
  // Their routes (epoch 0: routes_) and first endpoints; empty without epochs.
  std::vector<const Routes*> epoch_routes_;
  std::vector<int> epoch_first_endpoint_;
  int epoch_ = 0;
  std::vector<std::weak_ptr<MessageFlows>> live_;  // kept only with epochs
  std::size_t live_kept_ = 64;                     // live_'s size after its last pruning (+ 64)
  std::uint64_t restarted_flows_ = 0, resent_bytes_ = 0;
};

}  // namespace ultrasim
