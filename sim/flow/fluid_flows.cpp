#include "sim/flow/fluid_flows.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ultrasim {

void FluidFlows::resolve() {
  if (!dirty_) return;
  dirty_ = false;
  for (int id : share_.solve()) {
    Progress& p = progress_[id];
    // The flow sent at its previous rate since p.since; from now on at the new one.
    p.left = std::max(0.0, p.left - p.rate * (now_ - p.since));
    p.since = now_;
    p.rate = share_.rate(id);
    p.end = p.rate > 0 ? now_ + p.left / p.rate : std::numeric_limits<double>::infinity();
    ends_.emplace(p.end, id, ++p.version);
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
  Progress& p = progress_[id];
  p.left = bytes;
  p.since = now_;
  p.rate = 0;
  p.end = std::numeric_limits<double>::infinity();
  ++p.version;
  dirty_ = true;
  return id;
}

double FluidFlows::next_end() {
  resolve();
  while (!ends_.empty()) {
    const auto& [end, id, version] = ends_.top();
    if (version == progress_[id].version && share_.multiplicity(id) > 0) return end;
    ends_.pop();
  }
  return std::numeric_limits<double>::infinity();
}

std::vector<int> FluidFlows::end_next() {
  std::vector<int> ended;
  const double end = next_end();
  if (!std::isfinite(end)) return ended;
  advance_to(end);
  const double tie = end + 4 * std::numeric_limits<double>::epsilon() * std::abs(end);
  while (!ends_.empty()) {
    const auto [at, id, version] = ends_.top();
    if (version != progress_[id].version || share_.multiplicity(id) == 0) {
      ends_.pop();
      continue;
    }
    if (at > tie) break;
    ends_.pop();
    ++progress_[id].version;
    share_.remove(id);
    ended.push_back(id);
  }
  dirty_ = true;
  return ended;
}

}  // namespace ultrasim
