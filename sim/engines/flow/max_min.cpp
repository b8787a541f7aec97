#include "sim/engines/flow/max_min.hpp"

#include <algorithm>
#include <limits>
#include <queue>
#include <stdexcept>
#include <utility>

namespace ultrasim {

MaxMinShare::MaxMinShare(std::vector<double> capacity) : resources_(capacity.size()) {
  for (std::size_t r = 0; r < capacity.size(); ++r) {
    if (!(capacity[r] > 0)) throw std::invalid_argument("MaxMinShare: a capacity must be positive");
    resources_[r].capacity = capacity[r];
  }
}

int MaxMinShare::add(std::span<const int> resources, int multiplicity) {
  if (multiplicity < 1) throw std::invalid_argument("MaxMinShare: multiplicity must be at least 1");
  int id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<int>(flows_.size());
    flows_.emplace_back();
    paths_.emplace_back();
  }
  Flow& f = flows_[id];
  paths_[id].assign(resources.begin(), resources.end());
  f.multiplicity = multiplicity;
  f.rate = kFresh;
  added_.push_back(id);
  for (int r : paths_[id]) {
    resources_[r].flows.push_back(id);
    resources_[r].total += multiplicity;
    if (!resources_[r].changed) {
      resources_[r].changed = true;
      changed_.push_back(r);
    }
  }
  return id;
}

void MaxMinShare::remove(int flow) {
  Flow& f = flows_[flow];
  if (f.multiplicity == 0) throw std::invalid_argument("MaxMinShare: the flow was removed already");
  floor_ = std::min(floor_, f.rate);  // flows slower than it keep their rates (kFresh: no bound)
  for (int r : paths_[flow]) {
    resources_[r].total -= f.multiplicity;
    if (!resources_[r].changed) {
      resources_[r].changed = true;
      changed_.push_back(r);
    }
  }
  f.multiplicity = 0;
  f.rate = 0;
  removed_.push_back(flow);
}

// The rate below which no flow can change in this solve (see the header): the slowest removed flow's
// old rate, and for each added flow the least fair share among its resources (no flow gets less than its
// most crowded resource's capacity / flows), lowered by a relative margin so that rounding in the rates
// of earlier solves never keeps a flow fixed that is level with a changed one.
double MaxMinShare::take_floor() {
  double floor = floor_;
  for (int id : added_) {
    if (flows_[id].multiplicity == 0) continue;  // added and removed before this solve
    for (int r : paths_[id])
      floor = std::min(floor, resources_[r].capacity / static_cast<double>(resources_[r].total));
  }
  added_.clear();
  floor_ = std::numeric_limits<double>::infinity();
  return floor * (1 - kFloorMargin);
}

// Gathers into component_flows_ / component_resources_ every flow at or above `floor` (and every new
// flow) reachable from `resource` through such flows (breadth first), each once per solve(), marking it
// as still growing (rate -1). A flow below the floor keeps its rate and takes its share of each gathered
// resource's capacity (`left`, `unfixed`). Removed flows leave the lists walked.
void MaxMinShare::collect_component(int resource, double floor) {
  if (resources_[resource].mark == solve_mark_) return;
  std::size_t next = component_resources_.size();
  resources_[resource].mark = solve_mark_;
  component_resources_.push_back(resource);
  for (; next < component_resources_.size(); ++next) {
    Resource& res = resources_[component_resources_[next]];
    // Summed in locals: the stores through `res` would otherwise be redone for every entry.
    double left = res.capacity;
    long unfixed = res.total;
    std::size_t kept = 0;
    int* const list = res.flows.data();
    const std::size_t size = res.flows.size();
    for (std::size_t i = 0; i < size; ++i) {
      const int id = list[i];
      Flow& f = flows_[id];
      if (f.multiplicity == 0) continue;  // removed: leaves the list
      list[kept++] = id;
      if (f.mark == solve_mark_) continue;  // gathered already: growing
      if (f.rate < floor) {                 // keeps its rate (a fresh flow, at kFresh, never does)
        left -= f.rate * f.multiplicity;
        unfixed -= f.multiplicity;
        continue;
      }
      f.mark = solve_mark_;
      f.rate = -1;
      component_flows_.push_back(id);
      for (int q : paths_[id])
        if (resources_[q].mark != solve_mark_) {
          resources_[q].mark = solve_mark_;
          component_resources_.push_back(q);
        }
    }
    res.left = left;
    res.unfixed = unfixed;
    res.flows.resize(kept);
  }
}

// Progressive filling of the collected component: the resource with the smallest fair share
// (capacity left / flows still growing) is the next bottleneck; its growing flows get that share.
void MaxMinShare::fill_component() {
  using Entry = std::pair<double, int>;  // (share when pushed, resource); a share only ever grows
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  auto share_of = [](const Resource& res) {
    return res.left > 0 ? res.left / static_cast<double>(res.unfixed) : 0.0;
  };
  for (int r : component_resources_)
    if (resources_[r].unfixed > 0) queue.emplace(share_of(resources_[r]), r);
  while (!queue.empty()) {
    auto [share, r] = queue.top();
    queue.pop();
    Resource& res = resources_[r];
    if (res.unfixed == 0) continue;
    const double now = share_of(res);
    if (now > share) {  // flows elsewhere were fixed since this entry: its share grew
      queue.emplace(now, r);
      continue;
    }
    // Its own left and unfixed are not updated flow by flow: nothing reads them again in this solve
    // (the next one starts them afresh), and every flow of it is fixed now.
    res.unfixed = 0;
    for (int id : res.flows) {
      Flow& f = flows_[id];
      if (f.rate >= 0) continue;
      f.rate = now;
      for (int q : paths_[id]) {
        if (q == r) continue;
        resources_[q].left -= now * f.multiplicity;
        resources_[q].unfixed -= f.multiplicity;
      }
    }
  }
}

const std::vector<int>& MaxMinShare::solve() {
  ++solve_mark_;
  component_flows_.clear();
  component_resources_.clear();
  const double floor = take_floor();
  for (int r : changed_) {
    resources_[r].changed = false;
    collect_component(r, floor);
  }
  changed_.clear();
  // Every resource of a removed flow was marked, so collecting has purged it from every list.
  for (int id : removed_) paths_[id].clear(), free_.push_back(id);
  removed_.clear();
  fill_component();
  flows_solved_ += component_flows_.size();
  return component_flows_;
}

}  // namespace ultrasim
