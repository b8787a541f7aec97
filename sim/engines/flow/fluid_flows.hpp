// Flows of bytes over resources in time, at the max-min fair rates of sim/engines/flow/max_min.hpp: the event
// core of the flow engine. Between two events (a flow starting or ending) every rate is constant; at an
// event only the flows coupled to what changed are re-solved, their progress brought up to date and their
// end re-dated. A flow ends when its bytes have gone at its successive rates; the latency of its path is
// the caller's to add (as the SimGrid fabric adds it after the flow, sim/DESIGN.md).
//
// With a re-solve window w > 0 (the fast engine, sim/engines/flow/fast_engine.hpp) the rates are no longer
// exact: after flows end, the others are re-solved only once the time since the last solve reaches w x the
// time since the last flow started (a start is always solved at once: a new flow has no rate before). Until
// then the capacity the ended flows freed goes unused; at the deferred solve each flow whose rate rose is
// credited the rise over the time since the mean of the deferred ends, as if it had had it from then on.
// The ends themselves stay exact for the rates in force. Cost: about ln(T / t0) / w solves per burst of
// starts instead of one per end; error: results/engines (a few 0.1 % at w = 1 %).
//
// With a start window s > 0 as well (the traffic-matrix engine, sim/engines/matrix/, whose chips start
// their combine at staggered times, each start a solve of everything in flight otherwise), a start less
// than s x (now - the start of the busy period) after the last solve joins the next solve, due then, and
// sends nothing until it: at that solve each new flow is credited its rate since its own start, and each
// flow whose rate fell is debited the fall since the deferred starts' mean, as if the rates had held
// from then. With a start window, the end window is measured from the busy period's start too (the
// time since the flows in flight began), not from the last start, which staggered starts keep recent.
// Free of SimGrid; unit-tested on its own (test/sim/engines/flow/fluid_flows_test.cpp).
#pragma once

#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "sim/engines/flow/end_heap.hpp"
#include "sim/engines/flow/max_min.hpp"

namespace ultrasim {

class FluidFlows {
 public:
  // `window`: 0 for exact max-min at every event; else the re-solve window above (a fraction, < 1).
  // `start_window`: 0 solves every start at once; else a start within start_window x the time since the
  // flows in flight began (the busy period's start) of the last solve waits for that window's end
  // (the traffic-matrix engine's staggered starts; see the class comment).
  explicit FluidFlows(std::vector<double> capacity, double window = 0, double start_window = 0)
      : share_(std::move(capacity)), window_(window), start_window_(start_window) {}

  // Starts, at `now` (not before the last event), `multiplicity` identical flows of `bytes` each over
  // `resources`. Returns the flow's id (ids of ended flows are reused).
  int start(double now, std::span<const int> resources, double bytes, int multiplicity = 1);

  // When the next flow ends (infinity if none is in flight).
  double next_end();
  // With a re-solve window, next_end() may also be the end of a window, where no flow ends: end_next()
  // then re-solves and returns no flow.
  // Ends every flow that ends at next_end() (flows whose ends agree to a few ulps end together, as in
  // SimGrid, whose precision is far finer than any simulated time), advances the clock there, and
  // returns their ids.
  std::vector<int> end_next();

  double now() const { return now_; }
  std::size_t in_flight() const { return share_.flows_in_use(); }
  const MaxMinShare& share() const { return share_; }

 private:
  struct Progress {
    double left = 0;  // bytes still to send, as of `since`
    double since = 0;
    double rate = 0;                                       // bytes per second since `since`
    double end = std::numeric_limits<double>::infinity();  // in ends_ once it has a rate
  };
  void advance_to(double now);
  void resolve();

  MaxMinShare share_;
  std::vector<Progress> progress_;
  EndHeap ends_;  // flows by end time, earliest first (then by id)
  double now_ = 0;
  bool dirty_ = false;  // flows started or ended at now_ since the last solve
  // The re-solve window: flows ended since the last solve whose solve is deferred, and their mean end.
  const double window_;
  double last_start_ = 0, due_at_ = 0;
  int deferred_ = 0;
  double deferred_ends_ = 0;  // summed
  // The start window: starts whose solve is deferred, their summed times, when their solve is due.
  const double start_window_;
  double last_solve_ = 0, busy_since_ = 0, start_due_ = 0;
  int deferred_starts_ = 0;
  double deferred_start_sum_ = 0;
};

}  // namespace ultrasim
