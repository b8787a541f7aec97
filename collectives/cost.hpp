// Cost pieces shared by the algorithms' closed forms, and the lower bound no algorithm can beat.
#pragma once

#include <functional>

#include "collectives/algorithm.hpp"

namespace ultrasim {

// Time for a set of flows that all start at once under max-min sharing, in the link-load model: the
// largest route latency plus the largest bytes-per-bandwidth over every link direction they load.
// Exact on a single switch; on other fabrics the lower bound of that routing (no schedule beats the
// busiest link). `bytes(src, dst)` gives each ordered pair's volume (0 = no flow).
double concurrent_flows_time(const CostInput& in, const std::function<std::uint64_t(int, int)>& bytes);

// bound_s: the bytes each chip must send or receive (collective by collective; see README) divided by
// its injection bandwidth (sum of its links, per direction), plus the smallest route latency and the
// transfer overhead. 0 for one chip.
double lower_bound_s(CollectiveKind kind, const CostInput& in);

}  // namespace ultrasim
