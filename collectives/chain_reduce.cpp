// Pipelined chain reduce: the chain broadcast run backwards.
//   line the chips up towards the root (p-1, p-2, ..., 0), cut the buffer into C chunks
//   (pipeline_chunks); each chip adds chunk c from the previous chip to its own and forwards the sum
//   while it receives chunk c+1.
// model_s = chain_time, evaluated round by round (with reductions the cadence is not a simple closed
// form; without them it is the broadcast's (p-1)(α + c/β) + (C-1) c/β, c = ceil(n/C)). Exact on switch:N
// and ring:N (contention-free: each hop has its own link direction).
#include "collectives/chain.hpp"

namespace ultrasim {

AlgorithmEntry chain_reduce() {
  return {"reduce", "chain", "pipelined chain towards the root, pipeline_chunks chunks",
          [](const ParamSet& p) {
            return make_chain(pipeline_chunks_table().read(p).chunks, ChainDirection::kToRoot);
          },
          pipeline_chunks_table().specs()};
}

}  // namespace ultrasim
