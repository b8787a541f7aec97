// The fabric during a run: starts flows on chosen paths, pairs sends with receives, applies path latency,
// and records every transfer and compute interval. Implements the Transport for each chip.
// All methods are called from actors of one simulation (one at a time; no locking needed).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "collectives/transport.hpp"
#include "sim/engine_transport.hpp"
#include "sim/matching.hpp"
#include "sim/platform.hpp"
#include "sim/records.hpp"

namespace ultrasim {

class Fabric {
 public:
  // `record` keeps a TransferRecord per flow (for traces); counters are always kept. `routes` gives the
  // paths of each message under its multi-path policy (Routes::message_paths); null: the default route.
  // The platform must hold every path those name (make_platform_plan does under that policy).
  Fabric(Platform& platform, int chips, double transfer_overhead, bool record,
         const Routes* routes = nullptr);

  // Gives every chip endpoint (the chip host, and chip<r>#k of each further plane) an inbox whose
  // permanent receiver is a daemon "sink" actor on that host, so that a put starts its flow at once
  // (one-sided). The sink does not take each comm as it ends (two simcalls per flow, and no time
  // depends on it): woken once every kDrainEvery puts, it takes the ended ones in one go, so the inbox
  // does not keep every comm of the run. It blocks on a condition variable, not suspended: SimGrid
  // suspends the comms of a suspended actor. And every chip gets a
  // daemon "waiter" actor that waits for the flows of the chip's wait_all: SimGrid 3.32 removes a
  // finished comm from the waiting actor's activity list by a scan of the whole list, and the chip's
  // list holds every put it started, the waiter's none. Call once, before run().
  void start_sinks();

  struct Flow {
    simgrid::s4u::CommPtr comm;
    double latency = 0;  // path latency + transfer_overhead, added at delivery
    int path = 0;        // path index (0 = the route) in its epoch's path set of the pair
    std::uint64_t bytes = 0;
    int epoch = 0;  // the routing epoch it was started in (faults; 0 = the fault-free routes)
  };
  // A one-sided flow of `bytes` from chip src to chip dst along path `path_index` of routing epoch
  // `epoch` (from src's chip host to dst's endpoint for that path), started now. From the source chip's
  // own actor it is a put to that endpoint's inbox; from another actor, or without sinks, a
  // host-to-host comm along the same route. Both start at once and cost the same; puts avoid 3.32's
  // O(flows in flight) bookkeeping of host-to-host comms (one global list scanned at every completion:
  // 250 s instead of 2 s for a 288-chip all-to-all).
  Flow start_flow(int src, int dst, std::uint64_t bytes, int path_index = 0, int epoch = 0);

  // Link faults (workloads/faults.hpp). Routing epoch e >= 1 (set up before run(), in order) sends path
  // j of a pair, as `routes` gives it, to the destination's endpoint first_endpoint + j (the platform
  // holds those routes: add_epoch_paths). A put cancelled by a fault stays at the head of its inbox,
  // where the sink no longer drains it: that inbox keeps its ended comms from then on (memory only).
  void add_epoch(const Routes* routes, int first_endpoint);
  // Called at the epoch's start (from the fault actor, or before run() for one starting at 0): new flows
  // take its routes, and every flow still in flight across a link it has down is cancelled and started
  // again now, whole, on the epoch's paths of its pair (its bytes are resent).
  void begin_epoch(int epoch);
  std::uint64_t restarted_flows() const { return restarted_flows_; }
  std::uint64_t resent_bytes() const { return resent_bytes_; }

  // The Transport operations, on behalf of chip `self`. A send under `stripe` is one flow per path
  // with its bytes cut by split_bytes (paths given no byte get no flow); it is delivered when the last
  // has arrived. It counts once in transfer_count() and bytes_sent().
  RequestPtr send(int self, int dst, Message message, int step);
  RequestPtr recv(int self, int src, int step);
  void wait_all(int self, const std::vector<RequestPtr>& requests);
  void compute(int self, double seconds, const std::string& what);
  double now(int) const { return simgrid::s4u::Engine::get_clock(); }
  Transport::SwitchRequests switch_reduce(int self, int sw, const std::vector<int>& members, Message message,
                                          const std::vector<int>& wants, int step);
  // The rate of every switch's reduction engine (B/s; nullopt: free). Set before run().
  void set_switch_reduce_bandwidth(std::optional<double> rate) { switch_reduce_bandwidth_ = rate; }

  // After the run: what never completed, for a deadlock report ("chip3 waits for chip2 step 5").
  std::vector<std::string> unmatched_receives() const { return matcher_.unmatched_receives(); }
  const std::vector<TransferRecord>& transfers() const { return transfers_; }
  const std::vector<ComputeRecord>& computes() const { return computes_; }
  std::uint64_t transfer_count() const { return transfer_count_; }
  std::uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  struct FabricRequest;
  struct SendRequest;
  struct RecvRequest;
  struct Reduction;
  struct ReductionRequest;
  void finish_reduction(Reduction& reduction);
  void deliver(RecvRequest& receive);
  // wait_all's phases: gathers what `requests` wait for into `set` (blocking until each receive is
  // matched and each reduction's multicast has started); waits for those flows; delivers the receives
  // and results, returning when their data has arrived (the latest flow end plus its latency).
  struct WaitSet;
  void gather_flows(int self, const std::vector<RequestPtr>& requests, WaitSet& set);
  void wait_flows(int self, WaitSet& set);
  double deliver_waited(int self, const WaitSet& set);

  int endpoint_of(int epoch, int path) const {
    return epoch == 0 ? platform_.endpoint_index(path) : epoch_first_endpoint_[epoch] + path;
  }
  // Waits for a flow; a flow cancelled by begin_epoch returns here too (its replacement is waited for
  // on the next round of wait_all).
  static void wait_flow(const simgrid::s4u::CommPtr& flow);

  Platform& platform_;
  double transfer_overhead_;
  bool record_;
  const Routes* routes_;
  // Routing epochs (faults): their routes (epoch 0: routes_) and first endpoint; the current epoch;
  // every send that may still have a flow in flight (kept only with epochs); what begin_epoch resent.
  std::vector<const Routes*> epoch_routes_;
  std::vector<int> epoch_first_endpoint_;
  int epoch_ = 0;
  std::vector<std::weak_ptr<SendRequest>> live_;
  std::size_t live_kept_ = 64;  // live_'s size after its last pruning (+ 64)
  std::uint64_t restarted_flows_ = 0, resent_bytes_ = 0;
  Matcher<std::shared_ptr<SendRequest>, std::shared_ptr<RecvRequest>> matcher_;
  // Path latency + transfer_overhead of path k from chip a to chip b, at (a p + b) K + k (NaN: not yet
  // looked up); K = the most endpoints a chip has.
  std::vector<double> flow_latency_;
  int chips_ = 0, max_endpoints_ = 1;
  // An endpoint's inbox and its sink: the sink takes the comms that have ended out of the inbox when woken,
  // once every kDrainEvery puts (an inbox keeps every ended comm until someone takes it: 1.4 GB for the 2.65
  // M transfers of a 1152-chip ring; taking each one as it ends costs two SimGrid calls per transfer).
  struct Inbox {
    simgrid::s4u::Mailbox* mailbox = nullptr;
    simgrid::s4u::ConditionVariablePtr wake;
    std::uint64_t puts = 0;
  };
  static constexpr std::uint64_t kDrainEvery = 256;
  std::vector<std::vector<Inbox>> inbox_;  // per rank, per endpoint
  std::vector<simgrid::s4u::MutexPtr> mutex_;
  std::vector<simgrid::s4u::ConditionVariablePtr> arrived_;
  // Per chip: the actor that waits for the flows of the chip's wait_all (see start_sinks), the flows
  // handed to it, and the condition variables that hand them over and back.
  struct Waiter {
    std::vector<simgrid::s4u::CommPtr> flows;
    bool pending = false;
    bool engaged = false;  // it has waited for the chip once: the chip's list is long from then on
    simgrid::s4u::ConditionVariablePtr wake, done;
  };
  std::vector<Waiter> waiters_;
  std::map<std::pair<int, int>, std::shared_ptr<Reduction>> reductions_;  // (switch, step)
  std::vector<double> switch_busy_until_;          // per switch: when its reduction engine is free
  std::optional<double> switch_reduce_bandwidth_;  // nullopt: reductions at the switch are free
  std::vector<TransferRecord> transfers_;
  std::vector<ComputeRecord> computes_;
  std::uint64_t transfer_count_ = 0, bytes_sent_ = 0;
};

using SimTransport = EngineTransport<Fabric>;

}  // namespace ultrasim
