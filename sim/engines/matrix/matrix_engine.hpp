// The traffic-matrix engine (`--engine matrix`): prices a program that is a chain of all-to-allv exchanges
// (sim/machine/program.hpp, MatrixPhase: an MoE layer's dispatch, expert compute and combine) from its
// matrices, the chips' start times and the routes, without running the chips' programs or fibers: every
// pair's message is a flow per path part, started when its sender reaches the phase, ended at the max-min
// rates of sim/engines/flow/fluid_flows.hpp, delivered its path latency + transfer_overhead later, as the
// flow engine does.
//
//   for each chip r:        r sends phase 0 at its start (a late chip: at its late start)
//   when a flow ends:       its message is delivered latency + overhead later
//   when phase k's last message to r has ended and r has sent phase k:
//                           r is ready at max(its send time, the latest delivery); it sends phase k + 1 at
//                           ready + gap_s[r] x its slow factor, or, after the last phase, finishes at
//                           max(ready, when the last byte it sent left)
//
// With window 0 its times are the flow engine's on the same program (a test holds them to 1e-9); the
// engine's row runs with a re-solve window (fluid_flows.hpp) whose error is published in results/engines.
// A direct all-to-all or all-to-allv is one such exchange (workloads/collective/collective_program.cpp).
// Declines what is not such a chain (other collectives, training, Chakra, micro-chunked layers) and link
// faults.
#pragma once

#include "sim/engines/engines.hpp"

namespace ultrasim {

// The run at re-solve window `window` (0: exact max-min at every flow end), marked as `engine`.
EngineOutcome simulate_matrix(const Machine& machine, const Program& program, bool record, double window,
                              Engine engine);

}  // namespace ultrasim
