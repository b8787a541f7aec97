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

// Protected stacks (a guard page below each), kept for reuse once their fiber has ended: a Chakra trace
// spawns a fiber per node, and mapping a fresh stack costs more than most nodes' work. Fibers take a
// Handle, the copyable allocator Boost.Context keeps in each fiber.
class RecycledStacks {
 public:
  explicit RecycledStacks(std::size_t size) : make_(size) {}
  ~RecycledStacks() {
    for (auto& stack : free_) make_.deallocate(stack);
  }
  RecycledStacks(const RecycledStacks&) = delete;
  RecycledStacks& operator=(const RecycledStacks&) = delete;
  boost::context::stack_context allocate() {
    if (free_.empty()) return make_.allocate();
    const boost::context::stack_context stack = free_.back();
    free_.pop_back();
    return stack;
  }
  void deallocate(boost::context::stack_context& stack) noexcept {
    try {
      free_.push_back(stack);
    } catch (...) {
      make_.deallocate(stack);
    }
  }
  struct Handle {
    RecycledStacks* pool;
    boost::context::stack_context allocate() { return pool->allocate(); }
    void deallocate(boost::context::stack_context& stack) noexcept { pool->deallocate(stack); }
  };
  Handle handle() { return {this}; }

 private:
  boost::context::protected_fixedsize_stack make_;
  std::vector<boost::context::stack_context> free_;
};

// A request of a fiber engine, which tells sends, receives and spawned activities apart.
struct FiberRequest : Request {
  enum class Kind { kSend, kRecv, kActivity };
  explicit FiberRequest(Kind k) : kind(k) {}
  bool is_recv() const { return kind == Kind::kRecv; }
  const Kind kind;
};

// A spawned activity (Transport::spawn): done once its body has returned.
struct FiberActivity : FiberRequest {
  FiberActivity() : FiberRequest(Kind::kActivity) {}
  bool done = false;
};

// A receive: the engine's send it is matched with (once posted), and whether its message was taken.
template <class Send>
struct FiberReceive : FiberRequest {
  FiberReceive() : FiberRequest(Kind::kRecv) {}
  std::shared_ptr<Send> send;
  bool delivered = false;
};

// The fibers: first one per chip (fiber r runs chip r's part), then those added while they run (a chip's
// spawned activities), each numbered in the order it was added.
class ChipFibers {
 public:
  // p chips, each ready, chip r to run chip(r) when first resumed.
  ChipFibers(int p, const std::function<void(int)>& chip) {
    for (int r = 0; r < p; ++r) add(chip);
  }

  // A new fiber, ready, to run body(its number) when first resumed; returns its number. A fiber's stack
  // is released when its body returns.
  int add(std::function<void(int)> body) {
    const int f = static_cast<int>(fibers_.size());
    main_.emplace_back();
    fibers_.emplace_back(std::allocator_arg, stack_.handle(),
                         [this, f, body = std::move(body)](boost::context::fiber&& scheduler) {
                           main_[f] = std::move(scheduler);
                           body(f);
                           return std::move(main_[f]);
                         });
    ready_.push_back(f);
    return f;
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
  RecycledStacks stack_{kStack};
  // Each fiber, and the scheduler's side of it (deques: a fiber added while another runs moves neither).
  std::deque<boost::context::fiber> fibers_, main_;
  std::deque<int> ready_;
};

}  // namespace ultrasim
