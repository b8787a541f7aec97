#include "sim/fabric.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>

#include <boost/container/small_vector.hpp>
#include <simgrid/Exception.hpp>

namespace sg = simgrid::s4u;

namespace ultrasim {

namespace {
// Whether SimGrid has ended the flow: it sets an activity's finish time (-1 before) when it processes
// the end of its action, before it answers any wait. Reading it costs no simcall, where a wait on an
// ended comm costs one and a context switch.
bool has_ended(const sg::Comm& flow) {
  return flow.get_finish_time() >= 0;
}
}  // namespace

// Every request the fabric hands out says what it is, so that wait_all needs no dynamic_cast per request.
struct Fabric::FabricRequest : Request {
  enum class Kind { kSend, kRecv, kReduction };
  explicit FabricRequest(Kind k) : kind(k) {}
  const Kind kind;
};

struct Fabric::SendRequest : FabricRequest {
  SendRequest() : FabricRequest(Kind::kSend) {}
  int src = 0, dst = 0, step = 0;
  std::uint64_t bytes = 0;
  boost::container::small_vector<Flow, 1>
      flows;  // one per path taken (striped: several), parts summing to bytes
};

struct Fabric::RecvRequest : FabricRequest {
  RecvRequest() : FabricRequest(Kind::kRecv) {}
  int src = 0, dst = 0, step = 0;
  std::shared_ptr<SendRequest> send;  // set when matched
  bool delivered = false;             // its message (and record) taken from the send, once
};

// One in-switch reduction: the members' uploads, then (started by an actor on the switch once all have
// contributed) the multicast of the sums back to each member.
struct Fabric::Reduction {
  int sw = 0, step = 0;
  std::vector<int> members;
  std::vector<Message> contributions;  // in members order, filled as members call
  std::vector<std::vector<int>> wants;
  std::vector<Flow> uploads;
  int count = 0;                // members that have contributed
  std::vector<Flow> downloads;  // per member, published all at once
  std::vector<Message> results;
};

struct Fabric::ReductionRequest : FabricRequest {
  ReductionRequest() : FabricRequest(Kind::kReduction) {}
  std::shared_ptr<Reduction> reduction;
  int index = 0;  // of this chip in members
  bool result = false;
  bool delivered = false;
};

Fabric::Fabric(Platform& platform, int chips, double transfer_overhead, bool record, const Routes* routes)
    : platform_(platform),
      transfer_overhead_(transfer_overhead),
      record_(record),
      routes_(routes),
      matcher_(chips),
      switch_busy_until_(platform.switch_count(), 0.0) {
  for (int i = 0; i < chips; ++i) {
    mutex_.push_back(sg::Mutex::create());
    arrived_.push_back(sg::ConditionVariable::create());
    max_endpoints_ = std::max(max_endpoints_, platform.endpoint_count(i));
  }
  chips_ = chips;
  flow_latency_.assign(static_cast<std::size_t>(chips) * chips * max_endpoints_,
                       std::numeric_limits<double>::quiet_NaN());
}

void Fabric::start_sinks() {
  for (int r = 0; r < static_cast<int>(mutex_.size()); ++r) {
    inbox_.emplace_back();
    for (int k = 0; k < platform_.endpoint_count(r); ++k) {
      sg::Host* host = platform_.endpoint_host(r, k);  // each its own (hashed routes: fault detours)
      sg::Mailbox* inbox = sg::Mailbox::by_name(host->get_name() + "_inbox");
      auto wake = sg::ConditionVariable::create();
      auto sink = sg::Actor::create(host->get_name() + "_sink", host, [inbox, wake] {
        sg::Actor::self()->daemonize();
        auto mutex = sg::Mutex::create();
        for (;;) {
          {
            std::unique_lock lock(*mutex);
            wake->wait(lock);
          }
          while (inbox->ready()) inbox->get<Fabric>();  // ended comms, oldest first; their flows are timed
        }
      });
      inbox->set_receiver(sink);
      inbox_.back().push_back(Inbox{inbox, wake});
    }
  }
  waiters_.resize(mutex_.size());
  for (int r = 0; r < static_cast<int>(mutex_.size()); ++r) {
    Waiter& waiter = waiters_[r];
    waiter.wake = sg::ConditionVariable::create();
    waiter.done = sg::ConditionVariable::create();
    sg::Actor::create(platform_.chip(r)->get_name() + "_waiter", platform_.chip(r), [this, r] {
      sg::Actor::self()->daemonize();
      Waiter& w = waiters_[r];
      for (;;) {
        {
          std::unique_lock lock(*mutex_[r]);
          w.wake->wait(lock, [&w] { return w.pending; });
        }
        for (const auto& flow : w.flows)
          if (!has_ended(*flow)) wait_flow(flow);
        w.flows.clear();
        std::unique_lock lock(*mutex_[r]);
        w.pending = false;
        w.done->notify_one();
      }
    });
  }
}

Fabric::Flow Fabric::start_flow(int src, int dst, std::uint64_t bytes, int path_index, int epoch) {
  const int endpoint = endpoint_of(epoch, path_index);
  sg::Host* from = platform_.chip(src);
  sg::Host* to = platform_.endpoint_host(dst, endpoint);
  double& latency = flow_latency_[(static_cast<std::size_t>(src) * chips_ + dst) * max_endpoints_ + endpoint];
  if (std::isnan(latency)) latency = platform_.route_latency(from, to, /*cache=*/false) + transfer_overhead_;
  if (!inbox_.empty() && sg::this_actor::get_host() == from) {
    Inbox& inbox = inbox_[dst][endpoint];
    if (++inbox.puts % kDrainEvery == 0) inbox.wake->notify_one();
    return Flow{inbox.mailbox->put_async(this, bytes), latency, path_index, bytes, epoch};
  }
  return Flow{sg::Comm::sendto_async(from, to, bytes), latency, path_index, bytes, epoch};
}

void Fabric::add_epoch(const Routes* routes, int first_endpoint) {
  if (epoch_routes_.empty()) epoch_routes_.push_back(routes_), epoch_first_endpoint_.push_back(0);
  epoch_routes_.push_back(routes);
  epoch_first_endpoint_.push_back(first_endpoint);
}

void Fabric::begin_epoch(int epoch) {
  epoch_ = epoch;
  const Routes& routes = *epoch_routes_.at(epoch);
  auto crosses_down = [&](const SendRequest& send, const Flow& flow) {
    for (const PathShare& share : epoch_routes_[flow.epoch]->message_paths(send.src, send.dst))
      if (share.index == flow.path)
        return std::any_of(share.path.hops.begin(), share.path.hops.end(),
                           [&](const Hop& hop) { return routes.link_down(hop.link); });
    return false;
  };
  std::vector<std::weak_ptr<SendRequest>> still;
  for (const auto& weak : live_) {
    auto send = weak.lock();
    if (!send) continue;
    // The replacements are in place and counted before the old flows are cancelled: a cancel wakes the
    // chips waiting for them, which must then find the new flows (starting a flow lets others run, but
    // wakes no waiter).
    decltype(send->flows) flows;
    std::vector<sg::CommPtr> dropped;
    for (const Flow& flow : send->flows) {
      if (has_ended(*flow.comm) || !crosses_down(*send, flow)) {
        flows.push_back(flow);
        continue;
      }
      dropped.push_back(flow.comm);
      if (record_) {  // what it carried until now crossed its links: kept, for the link statistics
        const double now = sg::Engine::get_clock();
        const auto left = static_cast<std::uint64_t>(std::llround(std::max(0.0, flow.comm->get_remaining())));
        transfers_.push_back(TransferRecord{send->src, send->dst, flow.bytes - std::min(left, flow.bytes),
                                            send->step, flow.path, flow.comm->get_start_time(), now, now,
                                            flow.epoch, true});
      }
      ++restarted_flows_;
      resent_bytes_ += flow.bytes;
      routes.for_each_flow(send->src, send->dst, flow.bytes, [&](const PathShare& share, std::uint64_t part) {
        flows.push_back(start_flow(send->src, send->dst, part, share.index, epoch));
      });
    }
    send->flows = std::move(flows);
    for (const auto& comm : dropped) comm->cancel();
    if (std::any_of(send->flows.begin(), send->flows.end(),
                    [](const Flow& f) { return !has_ended(*f.comm); }))
      still.push_back(send);
  }
  live_ = std::move(still);
}

void Fabric::wait_flow(const sg::CommPtr& flow) {
  try {
    flow->wait();
  } catch (const simgrid::CancelException&) {
    // begin_epoch cancelled it and started its replacement: wait_all looks again.
  } catch (const simgrid::NetworkFailureException&) {
    // The same: SimGrid 3.32 reports a cancelled flow's network action as failed.
  }
}

RequestPtr Fabric::send(int self, int dst, Message message, int step) {
  auto request = std::make_shared<SendRequest>();
  request->src = self, request->dst = dst, request->step = step;
  request->bytes = message.bytes();
  request->message = std::move(message);
  // A chip's message to itself never leaves it: no fault touches it (epoch 0's loopback route).
  const int epoch = self == dst ? 0 : epoch_;
  const Routes* routes = epoch == 0 ? routes_ : epoch_routes_[epoch];
  if (!routes || (epoch == 0 && routes->policy() == Multipath::kSingle)) {
    request->flows.push_back(start_flow(self, dst, request->bytes, 0));  // the route: no lookup
  } else {
    routes->for_each_flow(self, dst, request->bytes, [&](const PathShare& share, std::uint64_t part) {
      request->flows.push_back(start_flow(self, dst, part, share.index, epoch));
    });
  }
  if (!epoch_routes_.empty()) {
    // A weak pointer keeps its send's storage (one allocation with make_shared): drop the expired ones
    // whenever the list has doubled since the last time.
    if (live_.size() >= 2 * live_kept_)
      std::erase_if(live_, [](const auto& weak) { return weak.expired(); }), live_kept_ = live_.size() + 64;
    live_.push_back(request);
  }
  ++transfer_count_;
  bytes_sent_ += request->bytes;
  if (auto receive = matcher_.post_send(self, dst, step, request)) {
    receive->send = request;
    arrived_[dst]->notify_all();
  }
  return request;
}

RequestPtr Fabric::recv(int self, int src, int step) {
  auto request = std::make_shared<RecvRequest>();
  request->src = src, request->dst = self, request->step = step;
  request->send = matcher_.post_recv(src, self, step, request);
  return request;
}

// What one round of wait_all waits for: the flows of its receives and of its reductions' uploads and
// downloads, the chip's own sends (in its activity list), and the receives and results to deliver.
struct Fabric::WaitSet {
  std::vector<sg::CommPtr> flows, own;
  std::vector<RecvRequest*> receives;
  std::vector<ReductionRequest*> results;
};

void Fabric::wait_all(int self, const std::vector<RequestPtr>& requests) {
  WaitSet set;
  // A fault may cancel and restart flows while this chip waits: then it looks at its requests again.
  for (std::uint64_t restarted = restarted_flows_ + 1; restarted != restarted_flows_;) {
    restarted = restarted_flows_;
    gather_flows(self, requests, set);
    wait_flows(self, set);
  }
  const double done = deliver_waited(self, set);
  if (done > sg::Engine::get_clock()) sg::this_actor::sleep_until(done);
}

void Fabric::gather_flows(int self, const std::vector<RequestPtr>& requests, WaitSet& set) {
  set.flows.clear(), set.own.clear(), set.receives.clear(), set.results.clear();
  // 1. Every receive must be matched by a posted send (the sender may not have reached it yet).
  set.flows.reserve(requests.size());
  set.receives.reserve(requests.size());
  for (const auto& request : requests) {
    const auto& tagged = static_cast<const FabricRequest&>(*request);  // every request here is the fabric's
    if (tagged.kind == FabricRequest::Kind::kReduction) {
      auto* reduction = static_cast<ReductionRequest*>(request.get());
      if (!reduction->result) {
        set.flows.push_back(reduction->reduction->uploads[reduction->index].comm);
      } else {
        Reduction& r = *reduction->reduction;
        if (r.downloads.empty()) {
          std::unique_lock lock(*mutex_[self]);
          arrived_[self]->wait(lock, [&r] { return !r.downloads.empty(); });
        }
        set.flows.push_back(r.downloads[reduction->index].comm);
        set.results.push_back(reduction);
      }
    } else if (tagged.kind == FabricRequest::Kind::kRecv) {
      auto* receive = static_cast<RecvRequest*>(request.get());
      if (!receive->send) {
        std::unique_lock lock(*mutex_[self]);
        arrived_[self]->wait(lock, [receive] { return receive->send != nullptr; });
      }
      set.receives.push_back(receive);
      for (const Flow& flow : receive->send->flows) set.flows.push_back(flow.comm);
    } else {
      for (const Flow& flow : static_cast<SendRequest*>(request.get())->flows) set.own.push_back(flow.comm);
    }
  }
}

void Fabric::wait_flows(int self, WaitSet& set) {
  // 2. Wait for the flows (wait_all then waits until the last receive's data has crossed its path's
  // latency). Waiting on each flow in turn ends when the last one does; a wait on an ended flow returns
  // at once. Many flows: the chip's waiter waits (start_sinks) for those still running, so that no wait
  // scans the chip's long activity list; the puts it waited for stay in that list, so from then on the
  // waiter does every wait of the chip. Until then, a few flows: the chip waits itself, cheaper than
  // the hand-over; it waits for each of its own sends, ended or not, since that takes the send off its
  // list and keeps the list short (a ring's chip would otherwise keep every put), and for the others
  // only if still running.
  auto unfinished = [](const sg::CommPtr& flow) { return !has_ended(*flow); };
  constexpr std::ptrdiff_t kSelfWaitMax = 8;
  if (!waiters_.empty() &&
      (waiters_[self].engaged || std::count_if(set.flows.begin(), set.flows.end(), unfinished) +
                                         std::count_if(set.own.begin(), set.own.end(), unfinished) >
                                     kSelfWaitMax)) {
    Waiter& waiter = waiters_[self];
    waiter.engaged = true;
    std::unique_lock lock(*mutex_[self]);
    waiter.flows = std::move(set.flows);
    waiter.flows.insert(waiter.flows.end(), set.own.begin(), set.own.end());
    waiter.pending = true;
    waiter.wake->notify_one();
    waiter.done->wait(lock, [&waiter] { return !waiter.pending; });
  } else {
    for (const auto& flow : set.own)
      if (flow->get_state() != sg::Activity::State::FINISHED) wait_flow(flow);
    for (const auto& flow : set.flows)
      if (unfinished(flow)) wait_flow(flow);
  }
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
    if (!result->delivered) {
      result->message = result->reduction->results[result->index], result->delivered = true;
      if (record_)  // the download: from the switch to this chip
        transfers_.push_back(TransferRecord{-1, self, down.bytes, result->reduction->step, 0,
                                            down.comm->get_start_time(),
                                            down.comm->get_finish_time() + down.latency,
                                            down.comm->get_finish_time(), 0, false, result->reduction->sw});
    }
  }
  return done;
}

void Fabric::deliver(RecvRequest& receive) {
  if (receive.delivered) return;  // a receive waited on again keeps what it got
  receive.delivered = true;
  receive.message = std::move(receive.send->message);
  if (record_) {
    const SendRequest& s = *receive.send;
    for (const Flow& flow : s.flows)
      transfers_.push_back(TransferRecord{
          s.src, s.dst, flow.bytes, s.step, flow.path, flow.comm->get_start_time(),
          flow.comm->get_finish_time() + flow.latency, flow.comm->get_finish_time(), flow.epoch});
  }
}

Transport::SwitchRequests Fabric::switch_reduce(int self, int sw, const std::vector<int>& members,
                                                Message message, const std::vector<int>& wants, int step) {
  auto& reduction = reductions_[{sw, step}];
  if (!reduction) {
    reduction = std::make_shared<Reduction>();
    reduction->sw = sw, reduction->step = step, reduction->members = members;
    reduction->contributions.resize(members.size());
    reduction->wants.resize(members.size());
    reduction->uploads.resize(members.size());
  }
  auto at = std::find(members.begin(), members.end(), self);
  if (at == members.end() || reduction->members != members)
    throw std::logic_error("switch_reduce: chip " + std::to_string(self) + " is not a member");
  const int index = static_cast<int>(at - members.begin());
  sg::Host* from = platform_.chip(self);
  sg::Host* to = platform_.switch_host(sw);
  std::uint64_t bytes = message.bytes();
  reduction->uploads[index] = Flow{sg::Comm::sendto_async(from, to, bytes),
                                   platform_.route_latency(from, to) + transfer_overhead_, 0, bytes};
  reduction->contributions[index] = std::move(message);
  reduction->wants[index] = wants;
  ++transfer_count_;
  bytes_sent_ += bytes;
  if (++reduction->count == static_cast<int>(members.size()))
    sg::Actor::create("reduction", platform_.switch_host(sw),
                      [this, reduction] { finish_reduction(*reduction); });
  auto sent = std::make_shared<ReductionRequest>();
  sent->reduction = reduction, sent->index = index;
  auto result = std::make_shared<ReductionRequest>(*sent);
  result->result = true;
  if (reduction->count == static_cast<int>(members.size())) reductions_.erase({sw, step});
  return {sent, result};
}

// Runs on the switch, in its own actor, once every member contributed: waits for the uploads to arrive,
// charges the switch's reduction engine (one reduction at a time) and starts the multicast back.
void Fabric::finish_reduction(Reduction& r) {
  double ready = 0;
  for (const Flow& up : r.uploads) {
    if (up.comm->get_state() != sg::Activity::State::FINISHED) up.comm->wait();
    ready = std::max(ready, up.comm->get_finish_time() + up.latency);
  }
  if (record_)  // the uploads: from each member to the switch
    for (std::size_t i = 0; i < r.members.size(); ++i) {
      const Flow& up = r.uploads[i];
      transfers_.push_back(TransferRecord{r.members[i], -1, up.bytes, r.step, 0, up.comm->get_start_time(),
                                          up.comm->get_finish_time() + up.latency, up.comm->get_finish_time(),
                                          0, false, r.sw});
    }
  std::map<int, std::uint64_t> slots;  // the engine adds every slot some member sent
  for (const Message& contribution : r.contributions)
    for (const Piece& piece : contribution.pieces) slots[piece.slot] = piece.bytes;
  std::uint64_t reduced = 0;
  for (const auto& [slot, bytes] : slots) reduced += bytes;
  double start = std::max(ready, switch_busy_until_[r.sw]);
  double done =
      start + (switch_reduce_bandwidth_ ? static_cast<double>(reduced) / *switch_reduce_bandwidth_ : 0.0);
  switch_busy_until_[r.sw] = done;
  if (done > sg::Engine::get_clock()) sg::this_actor::sleep_until(done);
  // Built aside and published at once: starting a flow may let other members run, and they take the
  // multicast as started when `downloads` is not empty.
  sg::Host* from = platform_.switch_host(r.sw);
  std::vector<Message> results;
  std::vector<Flow> downloads;
  for (std::size_t i = 0; i < r.members.size(); ++i) {
    results.push_back(switch_result(r.members, r.contributions, r.members[i], r.wants[i]));
    sg::Host* to = platform_.chip(r.members[i]);
    downloads.push_back(Flow{sg::Comm::sendto_async(from, to, results.back().bytes()),
                             platform_.route_latency(from, to) + transfer_overhead_, 0,
                             results.back().bytes()});
  }
  r.results = std::move(results);
  r.downloads = std::move(downloads);
  for (int m : r.members) arrived_[m]->notify_all();
}

void Fabric::compute(int self, double seconds, const std::string& what) {
  double start = sg::Engine::get_clock();
  sg::this_actor::sleep_for(seconds);
  if (record_) computes_.push_back(ComputeRecord{self, what, start, sg::Engine::get_clock()});
}

}  // namespace ultrasim
