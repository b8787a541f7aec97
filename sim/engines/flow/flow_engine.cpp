#include "sim/engines/flow/flow_engine.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <queue>

#include <boost/container/small_vector.hpp>

#include "sim/engines/chip_fibers.hpp"
#include "sim/engines/chip_program.hpp"
#include "sim/engines/engine_transport.hpp"
#include "sim/engines/flow/fluid_flows.hpp"
#include "sim/engines/matching.hpp"
#include "topology/base/errors.hpp"

namespace ultrasim {
namespace {

// A send: done when every part's flow has ended (`left`); its data arrives at `delivered`, the latest of
// its parts' flow end + latency.
struct FlowSend : FiberRequest {
  FlowSend() : FiberRequest(Kind::kSend) {}
  int src = 0, dst = 0;
  int parts_in_flight = 0;
  bool left = false;
  double delivered = 0;                                     // the latest delivery of the parts ended so far
  boost::container::small_vector<TransferRecord, 1> parts;  // kept only when recording
};

using FlowRecv = FiberReceive<FlowSend>;

// What a flow in flight belongs to.
struct FlowPart {
  std::shared_ptr<FlowSend> send;
  double latency = 0;
  int record = -1;  // index into send->parts, when recording
};

class FlowEngine {
 public:
  FlowEngine(const Machine& machine, Program& program, bool record, double window, Engine engine)
      : machine_(machine),
        program_(program),
        routes_(*machine.routes),
        p_(machine.p()),
        record_(record),
        overhead_(machine.transfer_overhead()),
        engine_(engine),
        flows_(link_direction_capacities(*machine.topology), window),
        blocked_(p_, false),
        woken_by_timer_(p_, false),
        actors_of_(p_),
        matcher_(p_),
        outcomes_(p_) {}

  EngineOutcome run();

  RequestPtr send(int self, int dst, Message message, int step);
  RequestPtr recv(int self, int src, int step) {
    auto request = std::make_shared<FlowRecv>();
    request->send = matcher_.post_recv(src, chip_of(self), step, request);
    return request;
  }
  void wait_all(int self, const std::vector<RequestPtr>& requests);
  void compute(int self, double seconds, const std::string& what);
  RequestPtr spawn(int self, std::function<void(Transport&)> body);
  std::size_t wait_any(int self, const std::vector<RequestPtr>& activities);
  Transport::SwitchRequests switch_reduce(int self, int, const std::vector<int>&, Message,
                                          const std::vector<int>&, int) {
    decline(self, "in-switch reduction is modelled by the SimGrid engine only");
    return {};  // not reached: a declined run never resumes this fiber
  }
  double now(int) const { return now_; }

 private:
  void decline(int self, std::string reason) {
    if (declined_.empty()) declined_ = std::move(reason);
    suspend(self);
  }
  void suspend(int self) { chips_->suspend(self); }
  void block(int self) {
    blocked_[self] = true;
    suspend(self);
  }
  // An activity (a fiber: chip r's part is fiber r, its spawned activities come after) and its chip.
  int chip_of(int self) const { return self < p_ ? self : spawned_chip_[self - p_]; }
  void wake_actor(int actor) {
    if (blocked_[actor]) blocked_[actor] = false, chips_->make_ready(actor);
  }
  // Wakes every activity of `chip` that blocks, to look at what it waits for again.
  void wake(int chip) {
    wake_actor(chip);
    for (int actor : actors_of_[chip]) wake_actor(actor);
  }
  void sleep_until(int self, double until);
  void part_ended(const FlowPart& part);
  bool step_time();

  struct Timer {
    double at;
    std::uint64_t order;  // FIFO among equal times, for determinism
    int chip;             // the activity asleep
    bool operator>(const Timer& o) const { return at != o.at ? at > o.at : order > o.order; }
  };

  const Machine& machine_;
  Program& program_;
  const Routes& routes_;
  const int p_;
  const bool record_;
  const double overhead_;
  const Engine engine_;
  FluidFlows flows_;
  std::vector<FlowPart> parts_;  // by flow id
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::uint64_t next_timer_ = 0;
  double now_ = 0;
  std::vector<bool> blocked_;                // per activity
  std::vector<bool> woken_by_timer_;         // per activity: its sleep's timer has fired
  std::vector<int> spawned_chip_;            // the chip of activity p_ + i
  std::vector<std::vector<int>> actors_of_;  // per chip: its spawned activities still running
  std::optional<ChipFibers> chips_;
  Matcher<std::shared_ptr<FlowSend>, std::shared_ptr<FlowRecv>> matcher_;
  ChipOutcomes outcomes_;
  SimResult result_;
  std::string declined_;
};

using FlowTransport = EngineTransport<FlowEngine>;

RequestPtr FlowEngine::send(int self, int dst, Message message, int step) {
  auto request = std::make_shared<FlowSend>();
  const std::uint64_t bytes = message.bytes();
  request->message = std::move(message);
  request->src = chip_of(self);
  request->dst = dst;
  request->delivered = now_;
  routes_.for_each_flow(request->src, dst, bytes, [&](const PathShare& share, std::uint64_t part) {
    FlowPart info{request, share.path.latency + overhead_, -1};
    if (record_) {
      info.record = static_cast<int>(request->parts.size());
      request->parts.push_back(TransferRecord{request->src, dst, part, step, share.index, now_, now_, now_});
    }
    if (part == 0) return part_ended(info);  // holds no link: ends as it starts
    const MaxMinShare::Path resources = link_directions(share.path);
    const int id = flows_.start(now_, {resources.data(), resources.size()}, static_cast<double>(part));
    if (parts_.size() <= static_cast<std::size_t>(id)) parts_.resize(id + 1);
    parts_[id] = std::move(info);
    ++request->parts_in_flight;
  });
  ++result_.transfers;
  result_.bytes_sent += bytes;
  if (auto receive = matcher_.post_send(request->src, dst, step, request)) {
    receive->send = request;
    if (request->left) wake(dst);  // a send of no bytes has left already: its receiver need not wait
  }
  return request;
}

// A part's flow has ended at now_: its data is delivered after its latency; the send is done once its
// last part has ended, which its sender and its receiver may be waiting for.
void FlowEngine::part_ended(const FlowPart& part) {
  FlowSend& send = *part.send;
  send.delivered = std::max(send.delivered, now_ + part.latency);
  if (part.record >= 0) {
    send.parts[part.record].wire_end = now_;
    send.parts[part.record].end = now_ + part.latency;
  }
  if (send.parts_in_flight > 0 && --send.parts_in_flight > 0) return;  // a zero-byte part holds no flow
  send.left = true;
  wake(send.src);
  wake(send.dst);
}

// As the SimGrid fabric waits (sim/engines/simgrid/fabric.cpp): until every flow of the requests has ended,
// then one sleep until the latest delivery of the receives among them.
void FlowEngine::wait_all(int self, const std::vector<RequestPtr>& requests) {
  for (const auto& request : requests) {
    const auto kind = static_cast<const FiberRequest&>(*request).kind;
    if (kind == FiberRequest::Kind::kRecv) {
      const auto& receive = static_cast<const FlowRecv&>(*request);
      while (!receive.send || !receive.send->left) block(self);
    } else if (kind == FiberRequest::Kind::kActivity) {
      while (!static_cast<const FiberActivity&>(*request).done) block(self);
    } else {
      while (!static_cast<const FlowSend&>(*request).left) block(self);
    }
  }
  double done = now_;
  for (const auto& request : requests) {
    if (static_cast<const FiberRequest&>(*request).is_recv()) {
      auto& receive = static_cast<FlowRecv&>(*request);
      done = std::max(done, receive.send->delivered);
      if (!receive.delivered) {
        receive.delivered = true;
        receive.message = std::move(receive.send->message);
        if (record_)
          result_.transfer_records.insert(result_.transfer_records.end(), receive.send->parts.begin(),
                                          receive.send->parts.end());
      }
    }
  }
  if (done > now_) sleep_until(self, done);
}

// A sleep as SimGrid 3.32 ends one: at the first event that leaves less than surf/precision of it
// (step_time). SimGrid also stretches a positive sleep to at least surf/precision; that is not copied: it
// matters only where a wait ends within rounding of its start, where exact arithmetic has no sleep at all
// (sim/DESIGN.md, "SimGrid's clock slack").
void FlowEngine::sleep_until(int self, double until) {
  woken_by_timer_[self] = false;
  timers_.push(Timer{until, next_timer_++, self});
  while (!woken_by_timer_[self]) block(self);  // a send of its own leaving wakes it too
}

void FlowEngine::compute(int self, double seconds, const std::string& what) {
  const double start = now_;
  if (seconds > 0) sleep_until(self, now_ + seconds);
  if (record_) result_.compute_records.push_back(ComputeRecord{chip_of(self), what, start, now_});
}

// A new fiber on the caller's chip, ready now; when its body returns (or throws: the chip's failure) it
// leaves the chip's activities and wakes the chip's waiters.
RequestPtr FlowEngine::spawn(int self, std::function<void(Transport&)> body) {
  auto activity = std::make_shared<FiberActivity>();
  const int chip = chip_of(self);
  const int actor = chips_->add([this, chip, activity, body = std::move(body)](int actor) {
    FlowTransport transport(*this, chip, p_, actor);
    try {
      body(transport);
    } catch (const std::exception& e) {
      outcomes_.failures.push_back("chip" + std::to_string(chip) + ": " + e.what());
    }
    activity->done = true;
    auto& mine = actors_of_[chip];
    mine.erase(std::find(mine.begin(), mine.end(), actor));
    wake(chip);
  });
  blocked_.push_back(false), woken_by_timer_.push_back(false), spawned_chip_.push_back(chip);
  actors_of_[chip].push_back(actor);
  return activity;
}

std::size_t FlowEngine::wait_any(int self, const std::vector<RequestPtr>& activities) {
  for (;;) {
    for (std::size_t i = 0; i < activities.size(); ++i)
      if (static_cast<const FiberActivity&>(*activities[i]).done) return i;
    block(self);
  }
}

// Moves the clock to the next event (the earliest flow end or timer) and handles every event at that
// instant; false when nothing is left to happen.
bool FlowEngine::step_time() {
  const double flow_end = flows_.next_end();
  const double timer = timers_.empty() ? std::numeric_limits<double>::infinity() : timers_.top().at;
  if (flow_end == std::numeric_limits<double>::infinity() && timer == flow_end) return false;
  if (flow_end <= timer) {
    std::vector<int> ended = flows_.end_next();
    now_ = flows_.now();
    for (int id : ended) part_ended(parts_[id]), parts_[id].send.reset();
  } else {
    now_ = timer;
  }
  // SimGrid ends a sleep (a delivery's latency, a compute interval) at the first event that leaves less
  // than surf/precision of it: so do these timers, and the chip goes on from that event's time.
  while (!timers_.empty() && timers_.top().at - now_ < kSimGridPrecision) {
    const Timer& due = timers_.top();
    woken_by_timer_[due.chip] = true;
    wake_actor(due.chip);
    timers_.pop();
  }
  return true;
}

EngineOutcome FlowEngine::run() {
  if (machine_.faults.touches_links())
    return {std::nullopt, "link faults are modelled by the SimGrid engine only"};
  chips_.emplace(p_, [this](int r) {
    FlowTransport transport(*this, r, p_);
    run_chip(machine_, program_, transport, outcomes_);
  });
  // Run every ready chip, then move the clock to the next event, until nothing is left to happen.
  for (bool more = true; more;) {
    chips_->run_ready([this] { return !declined_.empty(); });
    more = declined_.empty() && step_time();
  }
  chips_->clear();  // unwinds the stacks of chips still suspended
  if (!declined_.empty()) return {std::nullopt, declined_};
  result_.engine = engine_;
  try {
    return {conclude(machine_, program_, outcomes_, matcher_.unmatched_receives(), std::move(result_)), {}};
  } catch (const SimulationError& e) {
    return {std::nullopt, e.what(), true};
  }
}

}  // namespace

std::vector<double> link_direction_capacities(const Topology& topology) {
  std::vector<double> c;
  for (const Link& link : topology.links()) c.insert(c.end(), 2, link.bandwidth());
  return c;
}

MaxMinShare::Path link_directions(const Path& path) {
  MaxMinShare::Path resources;
  for (const Hop& hop : path.hops) resources.push_back(2 * hop.link + (hop.up ? 0 : 1));
  return resources;
}

EngineOutcome simulate_flow(const Machine& machine, Program& program, bool record, double window,
                            Engine engine) {
  FlowEngine flow(machine, program, record, window, engine);
  return flow.run();
}

EngineOutcome run_flow(const Machine& machine, Program& program, const RunOptions& options) {
  return simulate_flow(machine, program, options.record, 0, Engine::kFlow);
}

}  // namespace ultrasim
