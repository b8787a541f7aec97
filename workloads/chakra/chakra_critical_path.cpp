// ChakraStep::critical_path_s (workloads/chakra/chakra_program.hpp): the step as the ranks run it (the same
// issue loop, streams and order as ChakraStep::run) with every node at its cost alone, no two messages
// sharing a link: what ASTRA-sim's congestion-unaware backend computes, with ultrasim's costs. A collective
// starts once its last member has issued it and ends on every member model_s later; a send ends when its data
// has left (bytes / the path's bandwidth) and its receive once the data has arrived (+ the path's latency
// + transfer_overhead), as the contention-free engine times a message alone on its path. Messages pair
// per (src, dst, tag) in the order they are issued.
#include <algorithm>
#include <deque>
#include <map>
#include <queue>
#include <tuple>

#include "topology/base/errors.hpp"
#include "workloads/chakra/chakra_program.hpp"

namespace ultrasim {

double ChakraStep::find_critical_path(const Machine& machine) const {
  const int n = ranks();
  const double overhead = machine.transfer_overhead();
  struct Event {  // node `step` of `rank` ends at `at`
    double at;
    int rank, step;
    bool operator>(const Event& o) const { return std::tie(at, rank, step) > std::tie(o.at, o.rank, o.step); }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<>> ends;
  std::vector<Issuer> issuers;
  for (int r = 0; r < n; ++r) issuers.emplace_back(*this, plans_[r]);
  // A message alone on its path(s): when its data has left, and when it has arrived, after its start.
  auto message = [&](int src, int dst, std::uint64_t bytes) {
    double left = 0, arrived = 0;
    machine.routes->for_each_flow(src, dst, bytes, [&](const PathShare& share, std::uint64_t part) {
      const double end = part == 0 ? 0.0 : static_cast<double>(part) / share.path.bandwidth;
      left = std::max(left, end);
      arrived = std::max(arrived, end + share.path.latency + overhead);
    });
    return std::make_pair(left, arrived);
  };
  using Key = std::tuple<int, int, int>;                       // (src, dst, tag)
  std::map<Key, std::deque<std::pair<double, int>>> arrivals;  // sent, not received: (arrival, send step)
  std::map<Key, std::deque<std::pair<int, double>>> posted;    // receives waiting: (step, issued at)
  std::vector<int> arrived(collectives_.size(), 0);
  std::vector<double> latest(collectives_.size(), 0.0);
  std::vector<std::vector<std::pair<int, int>>> members(collectives_.size());
  // Rank r issues node i at `at`: its end, once known, becomes an event.
  auto issue = [&](int r, const Issuer::Issued& issued, double at) {
    const int i = issued.step;
    const Step& step = plans_[r].steps[i];
    const ChakraNode& node = *step.node;
    if (node.type == ChakraNodeType::kSend) {
      const auto [left, delivered] = message(r, node.peer, node.bytes);
      ends.push({at + left, r, i});
      auto& receives = posted[{r, node.peer, node.tag}];
      if (receives.empty()) {
        arrivals[{r, node.peer, node.tag}].emplace_back(at + delivered, i);
      } else {
        const auto [j, issued] = receives.front();
        receives.pop_front();
        ends.push({std::max(issued, at + delivered), node.peer, j});
      }
    } else if (node.type == ChakraNodeType::kRecv) {
      auto& sent = arrivals[{node.peer, r, node.tag}];
      if (sent.empty()) {
        posted[{node.peer, r, node.tag}].emplace_back(i, at);
      } else {
        ends.push({std::max(at, sent.front().first), r, i});
        sent.pop_front();
      }
    } else if (step.collective >= 0) {
      const int c = step.collective;
      latest[c] = std::max(latest[c], at);
      members[c].emplace_back(r, i);
      if (++arrived[c] == static_cast<int>(collectives_[c].members.size()))
        for (const auto& [rr, ii] : members[c]) ends.push({latest[c] + collectives_[c].model_s, rr, ii});
    } else {
      ends.push({at + step.compute_s * issued.slowdown, r, i});
    }
  };
  for (int r = 0; r < n; ++r)
    for (const Issuer::Issued& i : issuers[r].issue()) issue(r, i, 0.0);
  double last = 0;
  while (!ends.empty()) {
    const Event e = ends.top();
    ends.pop();
    last = std::max(last, e.at);
    issuers[e.rank].finish(e.step);
    for (const Issuer::Issued& i : issuers[e.rank].issue()) issue(e.rank, i, e.at);
  }
  for (int r = 0; r < n; ++r)
    if (const int i = issuers[r].stuck(); i >= 0) deadlock(r, i, members);
  for (const auto& [key, sent] : arrivals)  // a message no receive takes: a trace cut short, or mislabelled
    if (!sent.empty())
      never_received(std::get<0>(key), sent.front().second, std::get<1>(key), std::get<2>(key));
  return last;
}

void ChakraStep::never_received(int src, int step, int dst, int tag) const {
  const ChakraNode& node = *plans_[src].steps[step].node;
  throw InputError("Chakra trace '" + trace_[src].file + "': rank " + std::to_string(src) + " node " +
                   std::to_string(node.id) + " '" + node.name + "': sends a message to rank " +
                   std::to_string(dst) + " (comm_tag " + std::to_string(tag) + ") that rank " +
                   std::to_string(dst) + " never receives");
}

void ChakraStep::deadlock(int r, int step,
                          const std::vector<std::vector<std::pair<int, int>>>& issued) const {
  const ChakraNode& node = *plans_[r].steps[step].node;
  const std::string where = "Chakra trace '" + trace_[r].file + "': rank " + std::to_string(r) + " node " +
                            std::to_string(node.id) + " '" + node.name + "'";
  const int c = plans_[r].steps[step].collective;
  if (c < 0)
    throw InputError(where + ": waits for a message from rank " + std::to_string(node.peer) + " (comm_tag " +
                     std::to_string(node.tag) + ") that is never sent: the ranks' streams deadlock");
  int missing = -1;
  for (int m : collectives_[c].members)
    if (std::none_of(issued[c].begin(), issued[c].end(), [m](const auto& x) { return x.first == m; })) {
      missing = m;
      break;
    }
  throw InputError(where + ": collective " + std::to_string(collectives_[c].index) + " of process group '" +
                   collectives_[c].group + "' waits for rank " + std::to_string(missing) +
                   ", which never issues it: the ranks' streams deadlock");
}

}  // namespace ultrasim
