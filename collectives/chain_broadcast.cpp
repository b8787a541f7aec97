// Pipelined chain broadcast (the "pipelined" broadcast of MPICH/Open MPI; NCCL's ring broadcast):
//   line the chips up from the root (chip 0, 1, ..., p-1), cut the buffer into C chunks
//   (pipeline_chunks); each chip forwards chunk c to the next while it receives chunk c+1.
// model_s = chain_time: (p-1)(α + c/β) + (C-1) c/β with c = ceil(n/C) on switch:N and ring:N
// (contention-free: each hop has its own link direction). More chunks shorten the pipeline fill; each
// chunk pays its own α and, with transfer_overhead, its own overhead.
#include "collectives/chain.hpp"

namespace ultrasim {
namespace {

std::vector<int> line_from_root(int p) {
  std::vector<int> line(p);
  for (int i = 0; i < p; ++i) line[i] = (kRoot + i) % p;
  return line;
}

class ChainBroadcast : public Algorithm {
 public:
  explicit ChainBroadcast(int chunks) : chunks_(chunks) {}
  int chunks(int) const override { return chunks_; }
  void run(Chip& me) const override { chain_pass(me, line_from_root(me.size()), chunks_, OnArrival::kKeep); }
  double model_s(const CostInput& in) const override {
    return chain_time(in, line_from_root(in.p), chunks_, OnArrival::kKeep);
  }

 private:
  int chunks_;
};

}  // namespace

AlgorithmEntry chain_broadcast() {
  return {"broadcast",
          "chain",
          "pipelined chain from the root, pipeline_chunks chunks",
          [](const ParamSet& p) {
            return std::make_unique<ChainBroadcast>(static_cast<int>(p.number("pipeline_chunks")));
          },
          {pipeline_chunks_param()}};
}

}  // namespace ultrasim
