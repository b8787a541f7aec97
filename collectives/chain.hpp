// The pipelined chain that chain broadcast and chain reduce share: chips in a line, the buffer cut into
// chunks that stream down the line, each chip forwarding chunk c while it receives chunk c+1.
#pragma once

#include "collectives/algorithm.hpp"
#include "collectives/ring_pass.hpp"

namespace ultrasim {

// The pipelining parameter of the chain algorithms and of the switch-reduce family: pipeline_chunks,
// chunks the buffer is cut into, default 16. Read with read(params).chunks.
const ParamTable<PipelineParams>& pipeline_chunks_table();

// Chip at `position` (0 = the head of the line) in a line `line[0..p-1]` of chips: in round s it
// sends chunk s - position to the next chip (once it has it) and receives chunk s - position + 1 from
// the previous one, reducing or keeping it. chunks + p - 2 rounds in all.
void chain_pass(Chip& me, const std::vector<int>& line, int chunks, OnArrival on_arrival);

// model_s of chain_pass on per-chip clocks (rounds_time). On a line where every hop has the same α and
// β, without reductions: (p-1)(α + c/β) + (C-1) c/β with c = ceil(n/C). The textbook's (p-2+C)(α + c/β)
// pays α every round; here the head emits a chunk every c/β (sends are one-sided), so α is paid once per
// hop. Exact on switch:N and ring:N, where each hop is its own link direction.
double chain_time(const CostInput& in, const std::vector<int>& line, int chunks, OnArrival on_arrival);

// The chain algorithm over `chunks` chunks: from the root outwards, keeping what arrives (broadcast),
// or from the far end towards the root, reducing it (reduce).
enum class ChainDirection { kFromRoot, kToRoot };
std::unique_ptr<Algorithm> make_chain(int chunks, ChainDirection direction);

}  // namespace ultrasim
