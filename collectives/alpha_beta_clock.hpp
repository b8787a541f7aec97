// The α-β clock: the cost of an algorithm's own per-chip program (its run(Chip&)) under α-β without
// contention, so that a model_s that follows the schedule is not a second copy of it. Every chip runs the
// program on its own fiber with its own clock, and the Transport it sees charges:
//   - a send posted at the chip's clock t: its data has left at t + bytes / in.bandwidth(src, dst) (the
//     routes' multi-path rate: striped, the sum of the paths') and arrives in.alpha(src, dst) later;
//     posting it does not move the clock (sends are one-sided, as in the engines);
//   - wait_all: the clock moves to the latest of the departures of the sends and the arrivals of the
//     receives it waits for (a receive whose send is not posted yet suspends the fiber until it is);
//   - compute(s): the clock moves by s; Chip charges its reductions there, at in.reduce_bandwidth;
//   - sends and receives pair up per (src, dst, step) in posting order, as in the engines.
// No link is shared: each message has the bandwidth it would have alone. Where no two flows ever meet on
// a link direction (a ring on switch:N or ring:N) that is what the simulation charges, on one path; where
// they meet it is a lower bound of the simulated schedule.
#pragma once

#include "collectives/algorithm.hpp"
#include "collectives/collective.hpp"

namespace ultrasim {

// The time at which the last chip's program returns when `algorithm` runs as collective `kind` on local
// ranks 0..in.p-1 of `in`, each chip starting at 0 with the buffer layout of make_layout(kind, in.bytes,
// in.p, algorithm.chunks(in.p)) (an alltoallv with in.traffic_matrix()). Rethrows what a chip's program
// throws; throws std::logic_error if the program deadlocks or asks for an in-switch reduction.
double alpha_beta_time(const Algorithm& algorithm, CollectiveKind kind, const CostInput& in);

}  // namespace ultrasim
