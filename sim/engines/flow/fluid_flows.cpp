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
  // Deferred starts (start window > 0): a flow whose rate fell kept capacity the new flows took since
  // their mean start, and each new flow is credited its rate since its own start.
  const double debit = deferred_starts_ > 0 ? now_ - deferred_start_sum_ / deferred_starts_ : 0;
  deferred_ = 0, deferred_ends_ = 0, deferred_starts_ = 0, deferred_start_sum_ = 0;
  last_solve_ = now_;
  // The next solve for ends alone is due once now - solve >= window x (now - last start).
  // With a start window, ends measure the window from the busy period's start too (starts never stop).
  const double since = start_window_ > 0 ? busy_since_ : last_start_;
  due_at_ = window_ > 0 ? (now_ - window_ * since) / (1 - window_) : now_;
  for (int id : share_.solve()) {
    Progress& p = progress_[id];
    const double rate = share_.rate(id);
    const bool queued = ends_.contains(id);
    if (queued && rate == p.rate) continue;  // same rate: same end, nothing re-rounded
    // The flow sent at its previous rate since p.since; from now on at the new one.
    const double adjust = !queued          ? rate * (now_ - p.since)  // 0 unless its start was deferred
                          : rate >= p.rate ? (rate - p.rate) * credit
                                           : (rate - p.rate) * debit;
    p.left = std::max(0.0, p.left - p.rate * (now_ - p.since) - adjust);
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
  if (share_.flows_in_use() == 0) busy_since_ = now_;
  const int id = share_.add(resources, multiplicity);
  if (progress_.size() <= static_cast<std::size_t>(id)) progress_.resize(id + 1);
  progress_[id] = Progress{bytes, now_, 0, std::numeric_limits<double>::infinity()};
  last_start_ = now_;
  // With a start window, a start within it of the last solve waits for the window's end.
  const double due = last_solve_ + start_window_ * (now_ - busy_since_);
  if (start_window_ > 0 && !dirty_ && now_ < due) {
    if (deferred_starts_++ == 0) start_due_ = due;
    deferred_start_sum_ += now_;
  } else {
    dirty_ = true;
  }
  return id;
}

double FluidFlows::next_end() {
  resolve();
  const double end = ends_.empty() ? std::numeric_limits<double>::infinity() : ends_.top().first;
  // Deferred ends: the solve that gives their capacity to the others is an event of its own.
  const double ends_due = deferred_ > 0 ? std::min(end, std::max(due_at_, now_)) : end;
  return deferred_starts_ > 0 ? std::min(ends_due, std::max(start_due_, now_)) : ends_due;
}

std::vector<int> FluidFlows::end_next() {
  std::vector<int> ended;
  const double end = next_end();
  if (!std::isfinite(end)) return ended;
  advance_to(end);
  if (deferred_ > 0 && now_ >= due_at_) dirty_ = true, resolve();  // the window is over
  if (deferred_starts_ > 0 && now_ >= start_due_) dirty_ = true, resolve();
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
