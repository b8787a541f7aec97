// The chips of a fiber engine (the contention-free one, the flow engine): each chip runs its program on
// its own Boost.Context fiber, and the engine's scheduler resumes the ready ones. A fiber switch costs
// tens of nanoseconds, against microseconds for a SimGrid actor's.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include "collectives/transport.hpp"

namespace ultrasim {

// A request of a fiber engine, which tells sends from receives.
struct FiberRequest : Request {
  explicit FiberRequest(bool receive) : is_recv(receive) {}
  const bool is_recv;
};

// A receive: the engine's send it is matched with (once posted), and whether its message was taken.
template <class Send>
struct FiberReceive : FiberRequest {
  FiberReceive() : FiberRequest(true) {}
  std::shared_ptr<Send> send;
  bool delivered = false;
};

class ChipFibers {
 public:
  // p chips, each ready, chip r to run chip(r) when first resumed.
  ChipFibers(int p, const std::function<void(int)>& chip) : main_(p) {
    for (int r = 0; r < p; ++r) {
      fibers_.emplace_back(std::allocator_arg, stack_, [this, r, chip](boost::context::fiber&& scheduler) {
        main_[r] = std::move(scheduler);
        chip(r);
        return std::move(main_[r]);
      });
      ready_.push_back(r);
    }
  }

  // From chip r's fiber: back to the scheduler, until r is resumed.
  void suspend(int r) { main_[r] = std::move(main_[r]).resume(); }
  void make_ready(int r) { ready_.push_back(r); }

  // Resumes the ready chips, oldest first, until none is ready or stop() holds.
  template <class Stop>
  void run_ready(Stop stop) {
    while (!ready_.empty() && !stop()) {
      const int r = ready_.front();
      ready_.pop_front();
      fibers_[r] = std::move(fibers_[r]).resume();
    }
  }

  // Unwinds the stacks of the chips still suspended.
  void clear() { fibers_.clear(); }

 private:
  static constexpr std::size_t kStack = 512 * 1024;  // virtual; only the pages touched count
  boost::context::protected_fixedsize_stack stack_{kStack};
  std::vector<boost::context::fiber> fibers_, main_;  // each chip's fiber, and the scheduler's side of it
  std::deque<int> ready_;
};

}  // namespace ultrasim
