#include "collectives/ring_pass.hpp"

#include <algorithm>

#include "collectives/cost.hpp"

namespace ultrasim {
namespace {

// The slot chip r sends as its q-th piece.
int piece_slot(int p, int r, const std::vector<RingPass>& passes, int pieces, int q) {
  const int step = q / pieces, s = step % (p - 1);
  const int chunk = ((r + passes[step / (p - 1)].offset - s) % p + p) % p;
  return chunk * pieces + q % pieces;
}

}  // namespace

ParamSpec ring_pipeline_param() {
  return {"pipeline_chunks", "1", Unit::kCount,
          "pieces each ring step's chunk is sent in; a chip forwards piece i as soon as it has it",
          "NCCL's slices (a ring step's chunk moves in several pieces); 1 = whole chunks, the textbook ring"};
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

double ring_passes_time(const CostInput& in, const std::vector<RingPass>& passes, int pieces,
                        const std::vector<std::uint64_t>& slot_bytes) {
  const int p = in.p;
  if (p < 2) return 0;
  const int total = static_cast<int>(passes.size()) * (p - 1) * pieces;
  std::vector<double> clock(p, 0.0);
  // left[r][q % pieces]: when chip r's piece q finished leaving it (the last `pieces` of them).
  std::vector<std::vector<double>> left(p, std::vector<double>(pieces, 0.0));
  auto bytes = [&](int r, int q) { return slot_bytes[piece_slot(p, r, passes, pieces, q)]; };
  for (int q = 0; q < total + pieces - 1; ++q) {
    if (q < total)
      for (int r = 0; r < p; ++r)
        left[r][q % pieces] = clock[r] + static_cast<double>(bytes(r, q)) / in.bandwidth(r, (r + 1) % p);
    for (int r = 0; r < p; ++r) {
      const double sent = q < total ? left[r][q % pieces] : clock[r];
      const int j = q - pieces + 1, from = (r + p - 1) % p;
      if (j < 0) {
        clock[r] = sent;
        continue;
      }
      const double arrival = left[from][j % pieces] + in.alpha(from, r);
      const double reduce = passes[j / pieces / (p - 1)].on_arrival == OnArrival::kReduce
                                ? in.reduce_time(bytes(from, j))
                                : 0.0;
      clock[r] = pieces == 1 ? std::max(sent, arrival) + reduce
                             : std::max(sent, std::max(clock[r], arrival) + reduce);
    }
  }
  return *std::max_element(clock.begin(), clock.end());
}

double ring_passes_time(const CostInput& in, const std::vector<RingPass>& passes) {
  return ring_passes_time(in, passes, 1, even_chunks(in.bytes, in.p));
}

}  // namespace ultrasim
