// Max-min fair sharing of resources (link directions) among flows, re-solved incrementally: the rates
// our SimGrid configuration gives (sim/engines/simgrid/platform.cpp: CM02 with every SimGrid link at zero
// latency, so every flow has weight 1, TCP-gamma 0, no cross-traffic), computed without SimGrid.
//
// The rates are the max-min fair allocation: no flow's rate can grow without lowering the rate of a flow
// that has no more. Progressive filling computes it: every flow grows at the same pace until a resource
// is full; the flows on it keep the share they reached, the others grow on. A flow stands for
// `multiplicity` identical flows (same resources, same rate): it counts that many times on each of its
// resources, which is exact because identical flows always get the same max-min rate.
//
// Incremental: adding or removing a flow marks its resources; solve() re-solves only the flows coupled
// to a marked resource, and all changes made at one instant are handled in one solve. Coupled means
// more than sharing a component: progressive filling fixes flows in order of rate, and below the rate L
// of the slowest changed flow the filling runs exactly as it did (a changed flow's resources fill no
// earlier than L, so nothing that fills earlier sees it). So every flow slower than L keeps its rate, and
// only the flows at or above L that are reachable from a marked resource through flows at or above L
// are re-solved, on what the slower ones leave of each resource. L is the old rate of a removed flow;
// for an added one, whose rate is not known yet, the least fair share capacity / flows among its
// resources, which no flow falls below. A relative margin of 1e-6 below L absorbs the rounding of
// earlier solves. Ending fast flows (the early ends of a skewed all-to-all) thus re-solves only the fast.
// Built for speed on components of 10^4-10^5 flows: a flow's path is stored inline, each resource keeps
// the total multiplicity of its flows, and a removed flow leaves its resources' lists lazily, when the
// next solve walks them (which it does: they are marked).
// Free of SimGrid; unit-tested on its own (test/sim/engines/flow/max_min_test.cpp).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include <boost/container/small_vector.hpp>

namespace ultrasim {

class MaxMinShare {
 public:
  // One resource per entry of `capacity` (bytes per second, > 0).
  explicit MaxMinShare(std::vector<double> capacity);

  // A flow of `multiplicity` (>= 1) identical flows over `resources` (indices into the capacities,
  // each at most once); its rate is 0 until the next solve(). Returns its id; ids of removed flows are
  // reused.
  int add(std::span<const int> resources, int multiplicity = 1);
  void remove(int flow);

  // Re-solves the flows coupled to any resource whose flows changed since the last solve. Returns the
  // flows whose rate was recomputed (the component, whether or not the value moved), in no set order.
  const std::vector<int>& solve();

  // The rate of one of the `multiplicity` flows of `flow` (bytes per second), as of the last solve().
  double rate(int flow) const { return flows_[flow].rate == kFresh ? 0 : flows_[flow].rate; }
  int multiplicity(int flow) const { return flows_[flow].multiplicity; }
  using Path = boost::container::small_vector<int, 6>;  // inline up to 6 resources (3 hops each way)
  const Path& resources(int flow) const { return paths_[flow]; }
  // Flows added and not removed (a removed flow's id is free only once the next solve purges it).
  std::size_t flows_in_use() const { return flows_.size() - free_.size() - removed_.size(); }
  // Flows re-solved by every solve() so far (what incremental solving saves, for benchmarks).
  std::uint64_t flows_solved() const { return flows_solved_; }

 private:
  // What a solve reads of a flow at every entry of a resource's list: 16 bytes, its path kept apart
  // (paths_), so that walking a list touches less memory.
  struct Flow {
    double rate = 0;         // kFresh: added since the last solve
    int multiplicity = 0;    // 0: removed (its id is free once the next solve has purged it)
    std::uint32_t mark = 0;  // the solve() that last reached it
  };
  // The rate of a flow added since the last solve: above every floor, so that collecting gathers it.
  static constexpr double kFresh = std::numeric_limits<double>::infinity();
  struct Resource {
    double capacity = 0;
    std::vector<int> flows;  // ids using it, unordered; removed ones until the next solve walks it
    long total = 0;          // the multiplicities of its flows, summed
    bool changed = false;
    std::uint32_t mark = 0;
    double left = 0;   // during a solve: capacity not yet given to fixed flows
    long unfixed = 0;  // during a solve: flows (counting multiplicity) still growing
  };

  double take_floor();
  void collect_component(int resource, double floor);
  void fill_component();

  std::vector<Flow> flows_;
  std::vector<Path> paths_;  // by flow id
  std::vector<int> free_, removed_, added_;
  // The least old rate of the flows removed since the last solve (infinity if none).
  double floor_ = std::numeric_limits<double>::infinity();
  static constexpr double kFloorMargin = 1e-6;
  std::vector<Resource> resources_;
  std::vector<int> changed_;
  std::uint32_t solve_mark_ = 0;
  std::vector<int> component_flows_, component_resources_;
  std::uint64_t flows_solved_ = 0;
};

}  // namespace ultrasim
