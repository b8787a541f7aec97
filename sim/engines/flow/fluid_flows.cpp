#include "sim/engines/flow/fluid_flows.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ultrasim {

void FluidFlows::resolve() {
  if (!dirty_) return;
  dirty_ = false;
  // Deferred ends (window > 0): a flow whose rate rose had the capacity they freed since their mean end.
  const double credit = deferred_ > 0 ? now_ - deferred_ends_ / deferred_ : 0;
  deferred_ = 0, deferred_ends_ = 0;
  // The next solve for ends alone is due once now - solve >= window x (now - last start).
  due_at_ = window_ > 0 ? (now_ - window_ * last_start_) / (1 - window_) : now_;
  for (int id : share_.solve()) {
    Progress& p = progress_[id];
    const double rate = share_.rate(id);
    const bool queued = ends_.contains(id);
    if (queued && rate == p.rate) continue;  // same rate: same end, nothing re-rounded
    // The flow sent at its previous rate since p.since; from now on at the new one.
    p.left = std::max(
        0.0, p.left - p.rate * (now_ - p.since) - (queued ? std::max(0.0, rate - p.rate) * credit : 0));
    p.since = now_;
    p.rate = rate;
    p.end = rate > 0 ? now_ + p.left / rate : std::numeric_limits<double>::infinity();
    if (queued)
      ends_.update(id, p.end);
    else
      ends_.push(id, p.end);
  }
}

void FluidFlows::advance_to(double now) {
  if (now < now_) throw std::invalid_argument("FluidFlows: time runs backwards");
  if (now > now_) resolve();  // changes made at now_ take effect from now_
  now_ = now;
}

int FluidFlows::start(double now, std::span<const int> resources, double bytes, int multiplicity) {
  advance_to(now);
  const int id = share_.add(resources, multiplicity);
  if (progress_.size() <= static_cast<std::size_t>(id)) progress_.resize(id + 1);
  progress_[id] = Progress{bytes, now_, 0, std::numeric_limits<double>::infinity()};
  dirty_ = true;
  last_start_ = now_;
  return id;
}

double FluidFlows::next_end() {
  resolve();
  const double end = ends_.empty() ? std::numeric_limits<double>::infinity() : ends_.top().first;
  // Deferred ends: the solve that gives their capacity to the others is an event of its own.
  return deferred_ > 0 ? std::min(end, std::max(due_at_, now_)) : end;
}

std::vector<int> FluidFlows::end_next() {
  std::vector<int> ended;
  const double end = next_end();
  if (!std::isfinite(end)) return ended;
  advance_to(end);
  if (deferred_ > 0 && now_ >= due_at_) dirty_ = true, resolve();  // the window is over
  const double tie = end + 4 * std::numeric_limits<double>::epsilon() * std::abs(end);
  while (!ends_.empty() && ends_.top().first <= tie) {
    const int id = ends_.top().second;
    ends_.pop();
    share_.remove(id);
    ended.push_back(id);
  }
  if (ended.empty()) return ended;
  if (window_ == 0 || now_ >= due_at_)
    dirty_ = true;
  else
    ++deferred_, deferred_ends_ += now_;
  return ended;
}

}  // namespace ultrasim
