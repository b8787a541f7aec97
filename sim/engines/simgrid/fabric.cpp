#include "sim/engines/simgrid/fabric.hpp"

#include <algorithm>

namespace sg = simgrid::s4u;

namespace ultrasim {

// Every request the fabric hands out says what it is, so that wait_all needs no dynamic_cast per request.
struct Fabric::FabricRequest : Request {
  enum class Kind { kSend, kRecv, kReduction };
  explicit FabricRequest(Kind k) : kind(k) {}
  const Kind kind;
};

struct Fabric::SendRequest : FabricRequest, MessageFlows {
  SendRequest() : FabricRequest(Kind::kSend) {}
};

struct Fabric::RecvRequest : FabricRequest {
  RecvRequest() : FabricRequest(Kind::kRecv) {}
  int src = 0, dst = 0, step = 0;
  std::shared_ptr<SendRequest> send;  // set when matched
  bool delivered = false;             // its message (and record) taken from the send, once
};

// A member's side of an in-switch reduction: its upload (`sent`) or its result.
struct Fabric::ReductionRequest : FabricRequest {
  ReductionRequest() : FabricRequest(Kind::kReduction) {}
  std::shared_ptr<SwitchActors::Reduction> reduction;
  int index = 0;  // of this chip in members
  bool result = false;
  bool delivered = false;
};

Fabric::Fabric(Platform& platform, int chips, double transfer_overhead, bool record, const Routes* routes)
    : recorder_(record),
      flows_(platform, chips, transfer_overhead),
      epochs_(flows_, recorder_, routes),
      waits_(chips),
      switches_(flows_, waits_, recorder_),
      matcher_(chips) {}

void Fabric::start_sinks() {
  flows_.start_sinks();
  waits_.start_waiters(flows_.platform());
}

RequestPtr Fabric::send(int self, int dst, Message message, int step) {
  auto request = std::make_shared<SendRequest>();
  request->src = self, request->dst = dst, request->step = step;
  const std::uint64_t bytes = message.bytes();
  request->message = std::move(message);
  epochs_.start(request, bytes);
  recorder_.count_message(bytes);
  if (auto receive = matcher_.post_send(self, dst, step, request)) {
    receive->send = request;
    waits_.wake(dst);
  }
  return request;
}

RequestPtr Fabric::recv(int self, int src, int step) {
  auto request = std::make_shared<RecvRequest>();
  request->src = src, request->dst = self, request->step = step;
  request->send = matcher_.post_recv(src, self, step, request);
  return request;
}

void Fabric::wait_all(int self, const std::vector<RequestPtr>& requests) {
  WaitSet set;
  // A fault may cancel and restart flows while this chip waits: then it looks at its requests again.
  for (std::uint64_t restarted = epochs_.restarted_flows() + 1; restarted != epochs_.restarted_flows();) {
    restarted = epochs_.restarted_flows();
    gather_flows(self, requests, set);
    waits_.wait(self, set.flows, set.own);
  }
  const double done = deliver_waited(self, set);
  if (done > sg::Engine::get_clock()) sg::this_actor::sleep_until(done);
}

void Fabric::gather_flows(int self, const std::vector<RequestPtr>& requests, WaitSet& set) {
  set.flows.clear(), set.own.clear(), set.receives.clear(), set.results.clear();
  set.flows.reserve(requests.size());
  set.receives.reserve(requests.size());
  for (const auto& request : requests) {
    const auto& tagged = static_cast<const FabricRequest&>(*request);  // every request here is the fabric's
    if (tagged.kind == FabricRequest::Kind::kReduction) {
      gather_reduction(self, static_cast<ReductionRequest&>(*request), set);
    } else if (tagged.kind == FabricRequest::Kind::kRecv) {
      // Every receive must be matched by a posted send (the sender may not have reached it yet).
      auto* receive = static_cast<RecvRequest*>(request.get());
      waits_.until(self, [receive] { return receive->send != nullptr; });
      set.receives.push_back(receive);
      for (const Flow& flow : receive->send->flows) set.flows.push_back(flow.comm);
    } else {
      for (const Flow& flow : static_cast<SendRequest*>(request.get())->flows) set.own.push_back(flow.comm);
    }
  }
}

void Fabric::gather_reduction(int self, ReductionRequest& request, WaitSet& set) {
  SwitchActors::Reduction& r = *request.reduction;
  if (!request.result) {
    set.flows.push_back(r.uploads[request.index].comm);
    return;
  }
  waits_.until(self, [&r] { return r.published(); });
  set.flows.push_back(r.downloads[request.index].comm);
  set.results.push_back(&request);
}

double Fabric::deliver_waited(int self, const WaitSet& set) {
  double done = sg::Engine::get_clock();
  for (RecvRequest* receive : set.receives) {
    for (const Flow& flow : receive->send->flows)
      done = std::max(done, flow.comm->get_finish_time() + flow.latency);
    deliver(*receive);
  }
  for (ReductionRequest* result : set.results) {
    const Flow& down = result->reduction->downloads[result->index];
    done = std::max(done, down.comm->get_finish_time() + down.latency);
    deliver_result(self, *result);
  }
  return done;
}

void Fabric::deliver(RecvRequest& receive) {
  if (receive.delivered) return;  // a receive waited on again keeps what it got
  receive.delivered = true;
  receive.message = std::move(receive.send->message);
  if (recorder_.recording()) {
    const SendRequest& s = *receive.send;
    for (const Flow& flow : s.flows) recorder_.transfer(delivered_record(flow, s.src, s.dst, s.step));
  }
}

void Fabric::deliver_result(int self, ReductionRequest& result) {
  if (result.delivered) return;
  const SwitchActors::Reduction& r = *result.reduction;
  result.message = r.results[result.index], result.delivered = true;
  if (recorder_.recording())  // the download: from the switch to this chip
    recorder_.transfer(delivered_record(r.downloads[result.index], -1, self, r.step, r.sw));
}

Transport::SwitchRequests Fabric::switch_reduce(int self, int sw, const std::vector<int>& members,
                                                Message message, const std::vector<int>& wants, int step) {
  const std::uint64_t bytes = message.bytes();
  auto [reduction, index] = switches_.contribute(self, sw, members, std::move(message), wants, step);
  recorder_.count_message(bytes);
  auto sent = std::make_shared<ReductionRequest>();
  sent->reduction = std::move(reduction), sent->index = index;
  auto result = std::make_shared<ReductionRequest>(*sent);
  result->result = true;
  return {sent, result};
}

void Fabric::compute(int self, double seconds, const std::string& what) {
  const double start = sg::Engine::get_clock();
  sg::this_actor::sleep_for(seconds);
  if (recorder_.recording()) recorder_.compute(ComputeRecord{self, what, start, sg::Engine::get_clock()});
}

}  // namespace ultrasim
