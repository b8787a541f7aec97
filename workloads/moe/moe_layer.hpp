// The MoE layer as the program its chips run (sim/machine/program.hpp): dispatch (an all-to-allv of the
// router's token matrix), expert compute, combine (the outputs back to where the tokens came from),
// optionally pipelined in m micro-chunks so that one chunk's compute overlaps the next chunk's dispatch and
// the previous one's combine. Each chip holds an alltoallv layout of the dispatch matrix D (slot j: what chip
// r sends chip j, slot p + s: what it receives from chip s); the verdict checks that layout as an all-to-allv
// (every chip holds the tokens every other sent it). The bytes each phase moved are checked from the flow
// records by the runner (workloads/moe/moe_run.cpp).
//
//   post the receives of every dispatch chunk (step 2c) and every combine chunk (step 2c + 1)
//   for each chunk c: send chunk c of slot j to every chip j (lands in its slot p + r)
//   for each chunk c: wait for chunk c from every sender
//                     compute the experts on it (roofline, workloads/moe/moe.hpp)
//                     send chunk c of the outputs to every sender s (combine bytes; lands in s's slot r)
//   wait for everything
//
// model_s = dispatch's busiest-link time + the slowest chip's compute + combine's busiest-link time
// (concurrent_flows_time each, as direct all-to-allv): exact for m = 1 where the all-to-allv is.
#pragma once

#include <memory>
#include <vector>

#include "collectives/algorithm.hpp"
#include "collectives/traffic_matrix.hpp"
#include "sim/machine/program.hpp"
#include "workloads/moe/moe.hpp"

namespace ultrasim {

class MoeLayer : public Program {
 public:
  // `compute_s[chip][c]`: chip's expert time for chunk c; `dispatch`, `combine`: bytes per pair.
  MoeLayer(std::vector<std::vector<double>> compute_s, TrafficMatrix dispatch, TrafficMatrix combine);
  void run(Transport& transport) override;
  Verdict verdict() const override;
  // On the machine's α and β (`in`: its routes, p = the chip count; its bytes and traffic unused).
  double model_s(const CostInput& in) const;
  // Dispatch, then the experts' compute and combine (one micro-chunk only; empty otherwise).
  std::vector<MatrixPhase> matrix_form() const override;
  std::string matrix_refusal() const override;
  int micro_chunks() const { return chunks_; }
  const TrafficMatrix& dispatch() const { return dispatch_; }
  const TrafficMatrix& combine() const { return combine_; }

 private:
  std::vector<std::vector<double>> compute_s_;
  TrafficMatrix dispatch_, combine_;
  int chunks_ = 1;
  std::vector<std::vector<Contribution>> finals_;  // per chip: its alltoallv layout at the end
};

// The layer the chips run on `routing`: each chip's expert compute in config.micro_chunks chunks
// (expert_compute; none if `compute` is false: the layer is then its dispatch and combine alone), the
// dispatch matrix and the combine matrix (workloads/moe/moe.hpp).
std::unique_ptr<MoeLayer> make_moe_layer(const MoeRouting& routing, const MoeConfig& config,
                                         const ParamSet& params, bool compute = true);

// Step labels: dispatch chunk c is step 2c, its combine step 2c + 1.
inline bool is_combine_step(int step) {
  return step % 2 == 1;
}

}  // namespace ultrasim
