#include "collectives/chain.hpp"

#include <algorithm>

#include "collectives/cost.hpp"

namespace ultrasim {

const ParamTable<PipelineParams>& pipeline_chunks_table() {
  static const ParamTable<PipelineParams> table = ParamTable<PipelineParams>{}.add(
      {"pipeline_chunks",
       "16",
       Unit::kCount,
       "chunks the buffer is cut into for the chain's pipeline",
       "assumption: enough chunks to hide the fill of a 144-chip line, few enough to keep α small",
       {},
       kPipelineChunks},
      &PipelineParams::chunks);
  return table;
}

void chain_pass(Chip& me, const std::vector<int>& line, int chunks, OnArrival on_arrival) {
  const int p = me.size();
  const int position = static_cast<int>(std::find(line.begin(), line.end(), me.rank()) - line.begin());
  for (int s = 0; s + 2 < chunks + p; ++s) {
    std::vector<RequestPtr> requests;
    RequestPtr received;
    int out = s - position, in = s - position + 1;
    if (position + 1 < p && out >= 0 && out < chunks)
      requests.push_back(me.send(line[position + 1], s, {out}));
    if (position > 0 && in >= 0 && in < chunks) requests.push_back(received = me.recv(line[position - 1], s));
    if (requests.empty()) continue;
    me.wait(requests);
    if (received) me.accept(received, on_arrival);
  }
}

double chain_time(const CostInput& in, const std::vector<int>& line, int chunks, OnArrival on_arrival) {
  const int p = in.p;
  if (p < 2) return 0;
  auto bytes = even_chunks(in.bytes, chunks);
  return rounds_time(in, chunks + p - 2, [&](int s, std::vector<RoundTransfer>& out) {
    for (int position = 0; position + 1 < p; ++position) {
      int c = s - position;
      if (c >= 0 && c < chunks)
        out.push_back({line[position], line[position + 1], bytes[c], on_arrival == OnArrival::kReduce});
    }
  });
}

namespace {

class Chain : public Algorithm {
 public:
  Chain(int chunks, ChainDirection direction)
      : chunks_(chunks),
        on_arrival_(direction == ChainDirection::kFromRoot ? OnArrival::kKeep : OnArrival::kReduce),
        direction_(direction) {}
  int chunks(int) const override { return chunks_; }
  void run(Chip& me) const override { chain_pass(me, line(me.size()), chunks_, on_arrival_); }
  double model_s(const CostInput& in) const override {
    return chain_time(in, line(in.p), chunks_, on_arrival_);
  }

 private:
  // The chips in line order: root, root+1, ... (broadcast) or ..., root+1, root (reduce).
  std::vector<int> line(int p) const {
    std::vector<int> order(p);
    for (int i = 0; i < p; ++i)
      order[i] = direction_ == ChainDirection::kFromRoot ? (kRoot + i) % p : (kRoot + p - 1 - i) % p;
    return order;
  }
  int chunks_;
  OnArrival on_arrival_;
  ChainDirection direction_;
};

}  // namespace

std::unique_ptr<Algorithm> make_chain(int chunks, ChainDirection direction) {
  return std::make_unique<Chain>(chunks, direction);
}

}  // namespace ultrasim
