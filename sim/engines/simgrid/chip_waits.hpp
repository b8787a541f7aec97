// How a chip's actor blocks in the fabric (the wait strategy): until something it waits for has been
// posted (a matching send, the multicast of a reduction: whoever posts it wakes the chip), and until
// flows have ended. For flows the rule follows SimGrid 3.32's costs: a comm stays in its source actor's
// activity list until that actor waits for it, and a wait removes the ended comm from the waiting
// actor's list by a scan of the whole list. So each chip gets a daemon "waiter" actor that never starts
// a comm: a wait for more than kSelfWaitMax running flows is handed to it (the chip sleeps on a
// condition variable meanwhile), and once it has waited for a chip it does every later wait of that chip,
// whose list is long from then on (the puts it waited for stay in it). Until then, a few flows: the chip
// waits itself, cheaper than the hand-over, and for each of its own sends even when ended, which takes
// it off its list. A flow that has ended is not waited for otherwise (has_ended: no simcall).
// All calls come from the actors of one simulation, one at a time: no locking beyond SimGrid's.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/engines/simgrid/platform.hpp"

namespace ultrasim {

class ChipWaits {
 public:
  explicit ChipWaits(int chips);

  // One daemon waiter actor per chip, on its host. Call once, before run(); without waiters every chip
  // waits for its flows itself.
  void start_waiters(const Platform& platform);

  // Blocks chip `chip` until ready() holds; returns at once (no simcall) if it already does. ready() is
  // checked again whenever the chip is woken.
  template <class Ready>
  void until(int chip, Ready ready) {
    if (ready()) return;
    std::unique_lock lock(*mutex_[chip]);
    arrived_[chip]->wait(lock, ready);
  }
  // Wakes chip `chip` if it blocks in until(), to check its condition.
  void wake(int chip) { arrived_[chip]->notify_all(); }

  // Returns when every flow of `flows` (others' flows the chip waits for; taken) and `own` (the chip's
  // own sends) has ended or been cancelled.
  void wait(int chip, std::vector<simgrid::s4u::CommPtr>& flows,
            const std::vector<simgrid::s4u::CommPtr>& own);

 private:
  static constexpr std::ptrdiff_t kSelfWaitMax = 8;
  struct Waiter {
    std::vector<simgrid::s4u::CommPtr> flows;  // handed over, until waited for
    bool pending = false;
    bool engaged = false;  // it has waited for the chip once: the chip's list is long from then on
    simgrid::s4u::ConditionVariablePtr wake, done;
  };
  void serve(int chip);  // the waiter's body
  void hand_over(int chip, std::vector<simgrid::s4u::CommPtr>& flows,
                 const std::vector<simgrid::s4u::CommPtr>& own);

  // Per chip: the mutex of every wait above (the chip's and its waiter's), the condition variable
  // until() sleeps on, and its waiter (none before start_waiters).
  std::vector<simgrid::s4u::MutexPtr> mutex_;
  std::vector<simgrid::s4u::ConditionVariablePtr> arrived_;
  std::vector<Waiter> waiters_;
};

}  // namespace ultrasim
