#include "collectives/alpha_beta_clock.hpp"

#include <algorithm>
#include <deque>
#include <exception>
#include <memory>
#include <memory_resource>
#include <optional>
#include <stdexcept>

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

namespace ctx = boost::context;

namespace ultrasim {
namespace {

// Virtual stack per chip fiber; only the pages touched count towards memory (a few KiB).
constexpr std::size_t kFiberStack = 512 * 1024;

// A send (done: when its data has left) or a receive (done: when its data arrived, once matched).
struct ClockRequest : Request {
  explicit ClockRequest(bool is_receive) : receive(is_receive) {}
  const bool receive;
  bool matched = false;  // a receive: its send has been posted (message and done are set)
  double done = 0;
};
using ClockRequestPtr = std::shared_ptr<ClockRequest>;

// What waits at a destination chip for its partner, oldest first: sends not yet received (with their
// arrival and data) and receives whose send is not posted yet.
struct PendingSend {
  int src, step;
  double arrival;
  Message message;
};
struct PendingRecv {
  int src, step;
  ClockRequestPtr request;
};
struct Mailbox {
  std::deque<PendingSend> sends;
  std::deque<PendingRecv> recvs;
};

// Removes and returns the oldest entry of `queue` from `src` labelled `step`, if any. It is usually the
// oldest of all (a chip receives a neighbour's sends in order), taken in O(1).
template <class T>
std::optional<T> take_oldest(std::deque<T>& queue, int src, int step) {
  auto it =
      std::find_if(queue.begin(), queue.end(), [&](const T& e) { return e.src == src && e.step == step; });
  if (it == queue.end()) return std::nullopt;
  T taken = std::move(*it);
  queue.erase(it);
  return taken;
}

// α and β from a chip to `dst` (local ranks).
struct PairCost {
  int dst = -1;
  double alpha = 0, bandwidth = 0;
};

class AlphaBetaClock {
 public:
  AlphaBetaClock(const Algorithm& algorithm, CollectiveKind kind, const CostInput& in)
      : algorithm_(algorithm),
        kind_(kind),
        in_(in),
        uniform_(kind == CollectiveKind::kAlltoallv && !in.traffic
                     ? std::optional(TrafficMatrix::uniform(in.bytes, in.p))
                     : std::nullopt),
        clock_(in.p, 0.0),
        finish_(in.p, -1.0),
        waiting_(in.p, nullptr),
        last_pair_(in.p),
        mailboxes_(in.p) {}

  double run();

  // The Transport's operations on behalf of chip `self`, on its fiber.
  RequestPtr send(int self, int dst, Message message, int step);
  RequestPtr recv(int self, int src, int step);
  void wait_all(int self, const std::vector<RequestPtr>& requests);
  void compute(int self, double seconds) { clock_[self] += seconds; }
  double now(int self) const { return clock_[self]; }

 private:
  void run_chip(int self);
  // Back to the scheduler; the fiber runs again once the receive it waits for is matched.
  void suspend(int self) { scheduler_[self] = std::move(scheduler_[self]).resume(); }
  ClockRequestPtr make_request(bool receive) {
    return std::allocate_shared<ClockRequest>(std::pmr::polymorphic_allocator<ClockRequest>(&pool_), receive);
  }
  // α and β from `self` to `dst`, kept for its next send: a ring or a tree sends to the same few chips
  // again and again, and a multi-path β walks the paths' links.
  const PairCost& pair_cost(int self, int dst) {
    PairCost& last = last_pair_[self];
    if (last.dst != dst) last = PairCost{dst, in_.alpha(self, dst), in_.bandwidth(self, dst)};
    return last;
  }
  // An alltoallv's matrix (in.traffic_matrix()); null for the other collectives.
  const TrafficMatrix* traffic() const {
    if (kind_ != CollectiveKind::kAlltoallv) return nullptr;
    return in_.traffic ? in_.traffic : &*uniform_;
  }

  const Algorithm& algorithm_;
  const CollectiveKind kind_;
  const CostInput& in_;
  const std::optional<TrafficMatrix> uniform_;   // an alltoallv's uniform matrix when `in` has none
  std::pmr::unsynchronized_pool_resource pool_;  // the requests' memory, reused: no heap trip per message
  std::vector<double> clock_, finish_;           // finish -1: the program has not returned
  std::vector<const ClockRequest*> waiting_;     // per chip: the receive it is suspended on
  std::vector<PairCost> last_pair_;              // per chip: α and β to the chip it last sent to
  std::vector<Mailbox> mailboxes_;               // per destination chip
  std::deque<int> ready_;                        // chips whose fiber can run, in the order they became so
  std::vector<ctx::fiber> fibers_, scheduler_;   // each chip's fiber, and the scheduler's side of it
  std::exception_ptr failure_;                   // the first exception a chip's program threw
  bool abandoned_ = false;                       // the run is over: the fibers are being destroyed
};

// The Transport a chip's program sees: every call forwarded to the clock with the chip's rank.
class ClockTransport : public Transport {
 public:
  ClockTransport(AlphaBetaClock& clock, int rank, int size) : clock_(clock), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  RequestPtr send(int dst, Message message, int step) override {
    return clock_.send(rank_, dst, std::move(message), step);
  }
  RequestPtr recv(int src, int step) override { return clock_.recv(rank_, src, step); }
  void wait_all(const std::vector<RequestPtr>& requests) override { clock_.wait_all(rank_, requests); }
  SwitchRequests switch_reduce(int, const std::vector<int>&, Message, const std::vector<int>&, int) override {
    throw std::logic_error("the α-β clock does not model in-switch reduction");
  }
  void compute(double seconds, const std::string&) override { clock_.compute(rank_, seconds); }
  double now() const override { return clock_.now(rank_); }

 private:
  AlphaBetaClock& clock_;
  int rank_, size_;
};

RequestPtr AlphaBetaClock::send(int self, int dst, Message message, int step) {
  ClockRequestPtr request = make_request(false);
  const PairCost& pair = pair_cost(self, dst);
  request->done = clock_[self] + static_cast<double>(message.bytes()) / pair.bandwidth;
  const double arrival = request->done + pair.alpha;
  Mailbox& at = mailboxes_[dst];
  if (auto receive = take_oldest(at.recvs, self, step)) {
    receive->request->message = std::move(message);
    receive->request->done = arrival;
    receive->request->matched = true;
    if (waiting_[dst] == receive->request.get()) waiting_[dst] = nullptr, ready_.push_back(dst);
  } else {
    at.sends.push_back(PendingSend{self, step, arrival, std::move(message)});
  }
  return request;
}

RequestPtr AlphaBetaClock::recv(int self, int src, int step) {
  ClockRequestPtr request = make_request(true);
  Mailbox& at = mailboxes_[self];
  if (auto sent = take_oldest(at.sends, src, step)) {
    request->message = std::move(sent->message);
    request->done = sent->arrival;
    request->matched = true;
  } else {
    at.recvs.push_back(PendingRecv{src, step, request});
  }
  return request;
}

void AlphaBetaClock::wait_all(int self, const std::vector<RequestPtr>& requests) {
  double done = clock_[self];
  for (const RequestPtr& r : requests) {
    const auto& request = static_cast<const ClockRequest&>(*r);
    while (request.receive && !request.matched) {
      waiting_[self] = &request;
      suspend(self);
    }
    done = std::max(done, request.done);
  }
  clock_[self] = done;
}

void AlphaBetaClock::run_chip(int self) {
  try {
    ClockTransport transport(*this, self, in_.p);
    Layout layout = make_layout(kind_, in_.bytes, in_.p, algorithm_.chunks(in_.p), self, traffic());
    Chip chip(transport, std::move(layout.slot_bytes), std::move(layout.initial), in_.reduce_bandwidth);
    algorithm_.run(chip);
    finish_[self] = clock_[self];
  } catch (const std::exception&) {  // not the fiber's forced unwind, which must pass
    if (!failure_) failure_ = std::current_exception();
  }
}

double AlphaBetaClock::run() {
  ctx::protected_fixedsize_stack stack(kFiberStack);
  scheduler_.resize(in_.p);
  for (int r = 0; r < in_.p; ++r) {
    fibers_.emplace_back(std::allocator_arg, stack, [this, r](ctx::fiber&& scheduler) {
      scheduler_[r] = std::move(scheduler);
      if (!abandoned_) run_chip(r);  // a ucontext fiber destroyed before it ran is started, to end at once
      return std::move(scheduler_[r]);
    });
    ready_.push_back(r);
  }
  while (!ready_.empty() && !failure_) {
    const int r = ready_.front();
    ready_.pop_front();
    fibers_[r] = std::move(fibers_[r]).resume();
  }
  abandoned_ = true;
  fibers_.clear();  // unwinds the stacks of chips still suspended
  if (failure_) std::rethrow_exception(failure_);
  const auto stuck = std::find(finish_.begin(), finish_.end(), -1.0);
  if (stuck != finish_.end())
    throw std::logic_error("alpha_beta_time: deadlock, chip " + std::to_string(stuck - finish_.begin()) +
                           " waits for a message never sent");
  return in_.p > 0 ? *std::max_element(finish_.begin(), finish_.end()) : 0.0;
}

}  // namespace

double alpha_beta_time(const Algorithm& algorithm, CollectiveKind kind, const CostInput& in) {
  AlphaBetaClock clock(algorithm, kind, in);
  return clock.run();
}

}  // namespace ultrasim
