#include "sim/engines/simgrid/switch_actors.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <string>

#include <xbt/config.hpp>

namespace sg = simgrid::s4u;

namespace ultrasim {

SwitchActors::SwitchActors(FlowStarter& flows, ChipWaits& waits, Recorder& recorder)
    : flows_(flows),
      waits_(waits),
      recorder_(recorder),
      switches_(flows.platform().switch_count()),
      busy_until_(flows.platform().switch_count(), 0.0) {
  for (Switch& s : switches_) s.wake = sg::ConditionVariable::create();
}

void SwitchActors::start() {
  for (int k = 0; k < static_cast<int>(switches_.size()); ++k) {
    sg::Host* host = flows_.platform().switch_host(k);
    sg::Actor::create(host->get_name(), host, [this, k] { serve(k); });
  }
}

std::pair<std::shared_ptr<SwitchActors::Reduction>, int> SwitchActors::contribute(
    int self, int sw, const std::vector<int>& members, Message message, const std::vector<int>& wants,
    int step) {
  auto& reduction = open_[{sw, step}];
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
  reduction->uploads[index] =
      flows_.start_between(flows_.platform().chip(self), flows_.platform().switch_host(sw), message.bytes());
  reduction->contributions[index] = std::move(message);
  reduction->wants[index] = wants;
  auto complete = reduction;
  if (++reduction->count < static_cast<int>(members.size())) return {complete, index};
  open_.erase({sw, step});
  switches_[sw].queue.push_back(complete);
  switches_[sw].wake->notify_one();
  return {complete, index};
}

void SwitchActors::serve(int sw) {
  sg::Actor::self()->daemonize();
  Switch& s = switches_[sw];
  // Only this actor takes the lock, and keeps it: waiting releases it meanwhile.
  auto mutex = sg::Mutex::create();
  std::unique_lock lock(*mutex);
  for (;;) {
    s.wake->wait(lock, [&s] { return !s.queue.empty(); });
    const std::shared_ptr<Reduction> next = std::move(s.queue.front());
    s.queue.pop_front();
    reduce(*next);
  }
}

void SwitchActors::reduce(Reduction& r) {
  double arrived = 0, ready = 0;  // the last upload's end; and its data's arrival at the switch
  for (const Flow& up : r.uploads) {
    if (up.comm->get_state() != sg::Activity::State::FINISHED) up.comm->wait();
    arrived = std::max(arrived, up.comm->get_finish_time());
    ready = std::max(ready, up.comm->get_finish_time() + up.latency);
  }
  if (recorder_.recording())  // the uploads: from each member to the switch
    for (std::size_t i = 0; i < r.members.size(); ++i)
      recorder_.transfer(delivered_record(r.uploads[i], r.members[i], -1, r.step, r.sw));
  sleep_as_if_from(arrived, engine_done(r, ready));
  multicast(r);
}

void SwitchActors::sleep_as_if_from(double since, double until) {
  const double now = sg::Engine::get_clock();
  if (now == since) {  // the actor was free when the last upload ended
    if (until > now) sg::this_actor::sleep_until(until);
    return;
  }
  if (until <= since) return;
  // SimGrid's CPU model (cpu/optim Lazy, the default) ends a sleep at the date start + duration, with the
  // duration at least surf/precision, and ends it early at an event closer than that to its date.
  const double precision = simgrid::config::get_value<double>("surf/precision");
  const double end = since + std::max(until - since, precision);
  if (end - now < precision) return;  // it would have ended by now
  double duration = end - now;        // the one that ends it at `end`, to the bit
  while (now + duration > end) duration = std::nextafter(duration, 0.0);
  while (now + duration < end) duration = std::nextafter(duration, end);
  sg::this_actor::sleep_for(duration);
}

double SwitchActors::engine_done(const Reduction& r, double ready) {
  std::map<int, std::uint64_t> slots;  // the engine adds every slot some member sent
  for (const Message& contribution : r.contributions)
    for (const Piece& piece : contribution.pieces) slots[piece.slot] = piece.bytes;
  std::uint64_t reduced = 0;
  for (const auto& [slot, bytes] : slots) reduced += bytes;
  const double start = std::max(ready, busy_until_[r.sw]);
  const double done = start + (reduce_bandwidth_ ? static_cast<double>(reduced) / *reduce_bandwidth_ : 0.0);
  busy_until_[r.sw] = done;
  return done;
}

void SwitchActors::multicast(Reduction& r) {
  // Built aside and published at once: starting a flow may let other members run, and they take the
  // multicast as started when `downloads` is not empty.
  sg::Host* from = flows_.platform().switch_host(r.sw);
  std::vector<Message> results;
  std::vector<Flow> downloads;
  for (std::size_t i = 0; i < r.members.size(); ++i) {
    results.push_back(switch_result(r.members, r.contributions, r.members[i], r.wants[i]));
    downloads.push_back(
        flows_.start_between(from, flows_.platform().chip(r.members[i]), results.back().bytes()));
  }
  r.results = std::move(results);
  r.downloads = std::move(downloads);
  for (int m : r.members) waits_.wake(m);
}

}  // namespace ultrasim
