// The fabric during a SimGrid run: the Transport of every chip (SimTransport), composed of pieces with
// one job each: flows started on their paths (sim/engines/simgrid/flows.hpp), which paths a message takes and
// what link faults change (sim/engines/simgrid/routing_epochs.hpp), how a chip waits
// (sim/engines/simgrid/chip_waits.hpp), the switches' actors and their in-switch reductions
// (sim/engines/simgrid/switch_actors.hpp), and the records and counters (sim/engines/simgrid/recorder.hpp).
// The Fabric itself pairs sends with receives (sim/engines/matching.hpp) and delivers what a chip waited for:
// a receive when the last flow of its send has arrived (flow end + path latency), a reduction's result when
// its download has. All methods are called from actors of one simulation (one at a time; no locking needed),
// or before run().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "collectives/transport.hpp"
#include "sim/engines/engine_transport.hpp"
#include "sim/engines/matching.hpp"
#include "sim/engines/records.hpp"
#include "sim/engines/simgrid/chip_waits.hpp"
#include "sim/engines/simgrid/flows.hpp"
#include "sim/engines/simgrid/platform.hpp"
#include "sim/engines/simgrid/recorder.hpp"
#include "sim/engines/simgrid/routing_epochs.hpp"
#include "sim/engines/simgrid/switch_actors.hpp"

namespace ultrasim {

class Fabric {
 public:
  // `record` keeps a TransferRecord per flow (for traces); counters are always kept. `routes` gives the
  // paths of each message under its multi-path policy (Routes::message_paths); null: the default route.
  // The platform must hold every path those name (make_platform_plan does under that policy).
  Fabric(Platform& platform, int chips, double transfer_overhead, bool record,
         const Routes* routes = nullptr);

  // The chips' helper actors: every endpoint's sink (FlowStarter::start_sinks) and every chip's waiter
  // (ChipWaits::start_waiters). Call once, before run().
  void start_sinks();
  // The switches' actors (SwitchActors::start). Call once, before run().
  void start_switch_actors() { switches_.start(); }

  // Link faults: see RoutingEpochs (add, begin).
  void add_epoch(const Routes* routes, int first_endpoint) { epochs_.add(routes, first_endpoint); }
  void begin_epoch(int epoch) { epochs_.begin(epoch); }
  std::uint64_t restarted_flows() const { return epochs_.restarted_flows(); }
  std::uint64_t resent_bytes() const { return epochs_.resent_bytes(); }

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
  void set_switch_reduce_bandwidth(std::optional<double> rate) { switches_.set_reduce_bandwidth(rate); }

  // After the run: what never completed, for a deadlock report ("chip3 waits for chip2 step 5").
  std::vector<std::string> unmatched_receives() const { return matcher_.unmatched_receives(); }
  const std::vector<TransferRecord>& transfers() const { return recorder_.transfers(); }
  const std::vector<ComputeRecord>& computes() const { return recorder_.computes(); }
  std::uint64_t transfer_count() const { return recorder_.transfer_count(); }
  std::uint64_t bytes_sent() const { return recorder_.bytes_sent(); }

 private:
  struct FabricRequest;
  struct SendRequest;
  struct RecvRequest;
  struct ReductionRequest;
  // What one round of wait_all waits for: the flows of its receives and of its reductions' uploads and
  // downloads, the chip's own sends (in its activity list), and the receives and results to deliver.
  struct WaitSet {
    std::vector<simgrid::s4u::CommPtr> flows, own;
    std::vector<RecvRequest*> receives;
    std::vector<ReductionRequest*> results;
  };
  // wait_all's phases: gathers what `requests` wait for into `set` (blocking until each receive is
  // matched and each reduction's multicast has started); delivers the receives and results once their
  // flows have ended, returning when their data has arrived (the latest flow end plus its latency).
  void gather_flows(int self, const std::vector<RequestPtr>& requests, WaitSet& set);
  void gather_reduction(int self, ReductionRequest& request, WaitSet& set);
  double deliver_waited(int self, const WaitSet& set);
  void deliver(RecvRequest& receive);
  void deliver_result(int self, ReductionRequest& result);

  Recorder recorder_;
  FlowStarter flows_;
  RoutingEpochs epochs_;
  ChipWaits waits_;
  SwitchActors switches_;
  Matcher<std::shared_ptr<SendRequest>, std::shared_ptr<RecvRequest>> matcher_;
};

using SimTransport = EngineTransport<Fabric>;

}  // namespace ultrasim
