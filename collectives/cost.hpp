// Cost pieces shared by the algorithms' closed forms, and the lower bound no algorithm can beat.
#pragma once

#include <functional>
#include <map>
#include <utility>

#include "collectives/algorithm.hpp"

namespace ultrasim {

// ceil(log2 p): rounds of a binomial tree or of Bruck's algorithm over p chips (0 for one chip).
int ceil_log2(int p);

// One point-to-point transfer of a round: `src` sends `bytes` to `dst`, which reduces them or keeps them.
struct RoundTransfer {
  int src = 0, dst = 0;
  std::uint64_t bytes = 0;
  bool reduce = false;
};

// The α-β time of a schedule of rounds without contention, each chip on its own clock (as the simulator
// runs it: transfers are one-sided). A chip starts round k when its round k-1 ended; its sends take
// bytes / β(src, dst) from then; a transfer arrives α(src, dst) after the sender's send ended; the chip's
// round ends when its sends have left and its receives arrived, plus the reduction of what it reduces.
// `round_transfers(k, out)` appends round k's transfers. Chips that neither send nor receive in a round
// keep their clock. Exact in the simulator where no two transfers share a link direction at once.
double rounds_time(const CostInput& in, int rounds,
                   const std::function<void(int round, std::vector<RoundTransfer>& out)>& round_transfers);

// Time for a set of flows that all start at once under max-min sharing, in the link-load model: the
// largest route latency plus the largest bytes-per-bandwidth over every link direction they load.
// Exact on a single switch (and on switch planes, each message striped or hashed over them); on other
// fabrics the lower bound of that routing (no schedule beats the busiest link). A message loads each
// path it takes under the multi-path policy with its part. `bytes(src, dst)` gives each ordered pair's
// volume (0 = no flow).
double concurrent_flows_time(const CostInput& in, const std::function<std::uint64_t(int, int)>& bytes);
// The same for flows listed by (src, dst) pair (pairs not listed carry nothing); 0 for no flow.
double concurrent_flows_time(const CostInput& in, const std::map<std::pair<int, int>, std::uint64_t>& flows);

// bound_s: the bytes each chip must send or receive (per collective; collectives/README.md) divided by
// its injection bandwidth (sum of its links, per direction), plus the smallest route latency and the
// transfer overhead. 0 for one chip. `efficiency`: the fraction of the links' rate the topology's
// bandwidths were scaled by (a stack's protocol), undone here so that the bound stays the fabric's own.
double lower_bound_s(CollectiveKind kind, const CostInput& in, double efficiency = 1);

}  // namespace ultrasim
