#include "sim/engines/contention_free/uncontended.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <optional>
#include <sstream>

#include <boost/container/small_vector.hpp>

#include "sim/engines/chip_fibers.hpp"
#include "sim/engines/chip_program.hpp"
#include "sim/engines/engine_transport.hpp"
#include "sim/engines/link_ledger.hpp"
#include "sim/engines/matching.hpp"
#include "topology/base/errors.hpp"

namespace ultrasim {
namespace {

struct SendRequest : FiberRequest {
  SendRequest() : FiberRequest(Kind::kSend) {}
  double left = 0;       // when the last part's flow ended
  double delivered = 0;  // when the last part arrived (flow end + path latency)
  boost::container::small_vector<TransferRecord, 1> parts;  // kept only when recording
};

using RecvRequest = FiberReceive<SendRequest>;

class FiberEngine {
 public:
  FiberEngine(const Machine& machine, Program& program, bool record)
      : machine_(machine),
        program_(program),
        routes_(*machine.routes),
        p_(machine.p()),
        record_(record),
        overhead_(machine.transfer_overhead()),
        ledger_(machine.topology->links().size()),
        clock_(p_, 0.0),
        waiting_(p_, nullptr),
        matcher_(p_),
        outcomes_(p_) {}

  EngineOutcome run();

  // The Transport operations, on behalf of chip `self` (running on its fiber).
  RequestPtr send(int self, int dst, Message message, int step);
  RequestPtr recv(int self, int src, int step);
  void wait_all(int self, const std::vector<RequestPtr>& requests);
  void compute(int self, double seconds, const std::string& what) {
    const double start = clock_[self];
    clock_[self] += seconds;
    if (record_) result_.compute_records.push_back(ComputeRecord{self, what, start, clock_[self]});
  }
  Transport::SwitchRequests switch_reduce(int self, int, const std::vector<int>&, Message,
                                          const std::vector<int>&, int) {
    decline(self, "in-switch reduction is modelled by the SimGrid engine only");
    return {};  // not reached: a declined run never resumes this fiber
  }
  // Activities (Transport::spawn) wait for one another in time order, which chips on clocks of their own
  // cannot give: the flow engine runs them.
  RequestPtr spawn(int self, const std::function<void(Transport&)>&) {
    decline(self, "a chip runs concurrent activities (a Chakra trace's streams), which need one clock");
    return {};  // not reached: a declined run never resumes this fiber
  }
  std::size_t wait_any(int self, const std::vector<RequestPtr>&) {
    decline(self, "a chip waits for the first of its activities, which needs one clock");
    return 0;
  }
  void decline(int self, std::string reason) {
    if (declined_.reason.empty()) declined_.reason = std::move(reason);
    suspend(self);
  }
  double now(int self) const { return clock_[self]; }

 private:
  // Back to the scheduler; the fiber runs again when something it waits for is posted.
  void suspend(int self) { chips_->suspend(self); }
  void deliver(RecvRequest& receive);
  std::string clash_text() const;

  const Machine& machine_;
  Program& program_;
  const Routes& routes_;
  const int p_;
  const bool record_;
  const double overhead_;
  LinkLedger ledger_;
  std::vector<double> clock_;
  std::vector<RecvRequest*> waiting_;  // per chip: the receive it is suspended on
  std::optional<ChipFibers> chips_;
  Matcher<std::shared_ptr<SendRequest>, std::shared_ptr<RecvRequest>> matcher_;
  ChipOutcomes outcomes_;
  SimResult result_;
  Declined declined_;  // why it declined, and whether the run failed
};

using FiberTransport = EngineTransport<FiberEngine>;

RequestPtr FiberEngine::send(int self, int dst, Message message, int step) {
  auto request = std::make_shared<SendRequest>();
  const std::uint64_t bytes = message.bytes();
  request->message = std::move(message);
  const double start = clock_[self];
  request->left = request->delivered = start;
  routes_.for_each_flow(self, dst, bytes, [&](const PathShare& share, std::uint64_t part) {
    const double end = part == 0 ? start : start + static_cast<double>(part) / share.path.bandwidth;
    const double delivered = end + share.path.latency + overhead_;
    request->left = std::max(request->left, end);
    request->delivered = std::max(request->delivered, delivered);
    if (record_)
      request->parts.push_back(TransferRecord{self, dst, part, step, share.index, start, delivered, end});
    if (end <= start) return;  // holds no link
    auto& flows = ledger_.flows();
    const auto f = static_cast<std::uint32_t>(flows.size());
    flows.push_back(FlowSpan{start, end, self, dst});
    for (const Hop& hop : share.path.hops)
      if (!ledger_.add(hop.link, hop.up, f) && declined_.reason.empty()) declined_.reason = clash_text();
  });
  ++result_.transfers;
  result_.bytes_sent += bytes;
  if (auto receive = matcher_.post_send(self, dst, step, request)) {
    receive->send = request;
    if (waiting_[dst] == receive.get()) waiting_[dst] = nullptr, chips_->make_ready(dst);
  }
  if (!declined_.reason.empty()) suspend(self);  // abandoned: never resumed
  return request;
}

RequestPtr FiberEngine::recv(int self, int src, int step) {
  auto request = std::make_shared<RecvRequest>();
  request->send = matcher_.post_recv(src, self, step, request);
  return request;
}

void FiberEngine::wait_all(int self, const std::vector<RequestPtr>& requests) {
  double done = clock_[self];
  for (const auto& request : requests) {
    if (static_cast<const FiberRequest&>(*request).is_recv()) {
      auto* receive = static_cast<RecvRequest*>(request.get());
      while (!receive->send) {
        waiting_[self] = receive;
        suspend(self);
      }
      done = std::max(done, receive->send->delivered);
      deliver(*receive);
    } else {
      done = std::max(done, static_cast<const SendRequest&>(*request).left);
    }
  }
  clock_[self] = done;
}

void FiberEngine::deliver(RecvRequest& receive) {
  if (receive.delivered) return;  // a receive waited on again keeps what it got
  receive.delivered = true;
  receive.message = std::move(receive.send->message);
  if (record_)
    result_.transfer_records.insert(result_.transfer_records.end(), receive.send->parts.begin(),
                                    receive.send->parts.end());
}

std::string FiberEngine::clash_text() const {
  const auto& clash = ledger_.clash();
  const Link& link = machine_.topology->links()[clash.direction / 2];
  const bool up = clash.direction % 2 == 0;
  auto flow = [&](std::uint32_t f) {
    const FlowSpan& span = ledger_.flow(f);
    std::ostringstream out;
    out << "chip" << span.src << "->chip" << span.dst << " [" << span.start << ", " << span.end << ") s";
    return out.str();
  };
  return "link " + link.name + " (from " + machine_.topology->node(up ? link.a : link.b).name + ") carries " +
         flow(clash.first) + " and " + flow(clash.second) + " at once";
}

EngineOutcome FiberEngine::run() {
  chips_.emplace(p_, [this](int r) {
    FiberTransport transport(*this, r, p_);
    run_chip(machine_, program_, transport, outcomes_);
  });
  chips_->run_ready([this] { return !declined_.reason.empty(); });
  if (declined_.reason.empty() && !ledger_.check_unsorted()) declined_.reason = clash_text();
  chips_->clear();  // unwinds the stacks of chips still suspended
  if (!declined_.reason.empty()) return {std::nullopt, declined_.reason, declined_.failed};
  result_.engine = Engine::kContentionFree;
  try {
    return {conclude(machine_, program_, outcomes_, matcher_.unmatched_receives(), std::move(result_)), {}};
  } catch (const SimulationError& e) {
    return {std::nullopt, e.what(), true};
  }
}

}  // namespace

EngineOutcome run_contention_free(const Machine& machine, Program& program, const RunOptions& options) {
  FiberEngine engine(machine, program, options.record);
  return engine.run();
}

}  // namespace ultrasim
