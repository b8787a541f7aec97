#include "sim/engines/simgrid/chip_waits.hpp"

#include <algorithm>

#include "sim/engines/simgrid/flows.hpp"

namespace sg = simgrid::s4u;

namespace ultrasim {

ChipWaits::ChipWaits(int chips) {
  for (int i = 0; i < chips; ++i) {
    mutex_.push_back(sg::Mutex::create());
    arrived_.push_back(sg::ConditionVariable::create());
  }
}

void ChipWaits::start_waiters(const Platform& platform) {
  waiters_.resize(mutex_.size());
  for (int r = 0; r < static_cast<int>(mutex_.size()); ++r) {
    waiters_[r].wake = sg::ConditionVariable::create();
    waiters_[r].done = sg::ConditionVariable::create();
    sg::Actor::create(platform.chip(r)->get_name() + "_waiter", platform.chip(r), [this, r] { serve(r); });
  }
}

void ChipWaits::serve(int chip) {
  sg::Actor::self()->daemonize();
  Waiter& w = waiters_[chip];
  for (;;) {
    {
      std::unique_lock lock(*mutex_[chip]);
      w.wake->wait(lock, [&w] { return w.pending; });
    }
    for (const auto& flow : w.flows)
      if (!has_ended(*flow)) wait_flow(flow);
    w.flows.clear();
    std::unique_lock lock(*mutex_[chip]);
    w.pending = false;
    w.done->notify_one();
  }
}

void ChipWaits::wait(int chip, std::vector<sg::CommPtr>& flows, const std::vector<sg::CommPtr>& own) {
  auto unfinished = [](const sg::CommPtr& flow) { return !has_ended(*flow); };
  if (!waiters_.empty() &&
      (waiters_[chip].engaged || std::count_if(flows.begin(), flows.end(), unfinished) +
                                         std::count_if(own.begin(), own.end(), unfinished) >
                                     kSelfWaitMax)) {
    hand_over(chip, flows, own);
    return;
  }
  // The chip's own sends are waited for even when ended: that takes them off its activity list.
  for (const auto& flow : own)
    if (flow->get_state() != sg::Activity::State::FINISHED) wait_flow(flow);
  for (const auto& flow : flows)
    if (unfinished(flow)) wait_flow(flow);
}

void ChipWaits::hand_over(int chip, std::vector<sg::CommPtr>& flows, const std::vector<sg::CommPtr>& own) {
  Waiter& waiter = waiters_[chip];
  waiter.engaged = true;
  std::unique_lock lock(*mutex_[chip]);
  waiter.flows = std::move(flows);
  waiter.flows.insert(waiter.flows.end(), own.begin(), own.end());
  waiter.pending = true;
  waiter.wake->notify_one();
  waiter.done->wait(lock, [&waiter] { return !waiter.pending; });
}

}  // namespace ultrasim
