#include "collectives/ring_pass.hpp"

#include <algorithm>

#include "collectives/alpha_beta_clock.hpp"

namespace ultrasim {
namespace {

// The slot chip r sends as its q-th piece.
int piece_slot(int p, int r, const std::vector<RingPass>& passes, int pieces, int q) {
  const int step = q / pieces, s = step % (p - 1);
  const int chunk = ((r + passes[step / (p - 1)].offset - s) % p + p) % p;
  return chunk * pieces + q % pieces;
}

// Whether every hop r -> r+1 of the ring has the α and β of the first.
bool homogeneous_ring(const CostInput& in) {
  for (int r = 1; r < in.p; ++r)
    if (in.alpha(r, (r + 1) % in.p) != in.alpha(0, 1) ||
        in.bandwidth(r, (r + 1) % in.p) != in.bandwidth(0, 1))
      return false;
  return true;
}

}  // namespace

const ParamTable<PipelineParams>& ring_pipeline_table() {
  static const ParamTable<PipelineParams> table = ParamTable<PipelineParams>{}.add(
      {"pipeline_chunks",
       "1",
       Unit::kCount,
       "pieces each ring step's chunk is sent in; a chip forwards piece i as soon as it has it",
       "NCCL's slices (a ring step's chunk moves in several pieces); 1 = whole chunks, the textbook ring",
       {},
       kPipelineChunks},
      &PipelineParams::chunks);
  return table;
}

void ring_passes(Chip& me, int first_step, const std::vector<RingPass>& passes, int pieces) {
  const int p = me.size(), r = me.rank();
  if (p < 2) return;
  const int right = (r + 1) % p, left = (r + p - 1) % p;
  const int total = static_cast<int>(passes.size()) * (p - 1) * pieces;  // pieces each chip sends
  for (int q = 0; q < total + pieces - 1; ++q) {
    RequestPtr sent, received;
    if (q < total) sent = me.send(right, first_step + q / pieces, {piece_slot(p, r, passes, pieces, q)});
    const int j = q - pieces + 1;  // the piece arriving now: what piece q+1 forwards
    if (j >= 0) received = me.recv(left, first_step + j / pieces);
    const OnArrival on_arrival = passes[std::max(j, 0) / pieces / (p - 1)].on_arrival;
    if (pieces == 1) {
      me.wait({sent, received});
      me.accept(received, on_arrival);
      continue;
    }
    if (received) {
      me.wait({received});
      me.accept(received, on_arrival);  // while piece q is still leaving
    }
    if (sent) me.wait({sent});
  }
}

double ring_model_s(const Algorithm& ring, CollectiveKind kind, const CostInput& in,
                    const std::vector<RingPass>& passes, int pieces) {
  const int p = in.p;
  if (p < 2) return 0;
  if (pieces > 1 || !homogeneous_ring(in)) return alpha_beta_time(ring, kind, in);
  // The textbook sum, added step by step as the clock adds it, so that the two agree to the last bit (a
  // ring schedule read from a file, costed by rounds_time, then has the built-in's model_s exactly).
  const std::uint64_t c = (in.bytes + p - 1) / p;
  const double send = static_cast<double>(c) / in.bandwidth(0, 1), alpha = in.alpha(0, 1);
  double t = 0;
  for (const RingPass& pass : passes)
    for (int step = 1; step < p; ++step) {
      t = t + send + alpha;
      if (pass.on_arrival == OnArrival::kReduce) t += in.reduce_time(c);
    }
  return t;
}

}  // namespace ultrasim
