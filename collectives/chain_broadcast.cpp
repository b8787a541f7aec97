// Pipelined chain broadcast (the "pipelined" broadcast of MPICH/Open MPI; NCCL's ring broadcast):
//   line the chips up from the root (chip 0, 1, ..., p-1), cut the buffer into C chunks
//   (pipeline_chunks); each chip forwards chunk c to the next while it receives chunk c+1.
// model_s = chain_time: (p-1)(α + c/β) + (C-1) c/β with c = ceil(n/C) on switch:N and ring:N
// (contention-free: each hop has its own link direction). More chunks shorten the pipeline fill; each
// chunk pays its own α and, with transfer_overhead, its own overhead.
#include "collectives/chain.hpp"

namespace ultrasim {

AlgorithmEntry chain_broadcast() {
  return {"broadcast", "chain", "pipelined chain from the root, pipeline_chunks chunks",
          [](const ParamSet& p) {
            return make_chain(pipeline_chunks_table().read(p).chunks, ChainDirection::kFromRoot);
          },
          pipeline_chunks_table().specs()};
}

}  // namespace ultrasim
