// Two-dimensional ring all-reduce on a torus (the 2D all-reduce of TPU pods: Ying et al., "Image
// classification at supercomputer scale", 2018; Kumar et al., "Exploring the limits of concurrency in ML
// training on Google TPUs", MLSys 2021). On torus:XxY chip (x, y) is rank x + X y (torus.hpp), so the rows
// (fixed y) and the columns (fixed x) are the torus's own rings:
//   1. reduce-scatter around each row: chip (x, y) holds its row's sum of column x's share (n/X);
//   2. reduce-scatter around each column on that share: chip (x, y) holds the full sum of part x + X y;
//   3. all-gather around each column; 4. all-gather around each row.
// It is the hierarchical all-reduce (hierarchical.cpp) with the rows as groups and rings in and across
// them; this file only finds the rows on the torus. Every step is one hop on a link no other flow uses,
// so model_s (the phases on per-chip α-β clocks) is exact on torus:XxY:
//   2(X-1)(α + n/(Xβ)) + 2(Y-1)(α + n/(pβ)), plus the reductions at R: n/(XR) + (Y-1) n/(pR).
// Against one ring over all p chips (2(p-1)(α + n/(pβ)), and a ring over a torus's chips in rank order
// takes a multi-hop wrap at every row's end) it pays 2(X+Y-2) latencies instead of 2(p-1).
// Placed on any other topology it refuses (so `auto` leaves it out); on the recording fake, which has no
// topology, rows are floor(sqrt(p)) chips.
#include "collectives/algorithm.hpp"

#include "collectives/hierarchical.hpp"
#include "topology/base/errors.hpp"
#include "topology/registry.hpp"
#include "topology/torus.hpp"

namespace ultrasim {
namespace {

const std::vector<HierarchicalPhase> kTorusPhases{{HierarchicalOp::kReduceScatter, true},
                                                  {HierarchicalOp::kReduceScatter, false},
                                                  {HierarchicalOp::kAllGather, false},
                                                  {HierarchicalOp::kAllGather, true}};

// X of a two-dimensional torus:XxY; InputError for any other topology.
long torus_row_length(const Topology& topology) {
  auto [name, args] = split_topology_spec(topology.spec());
  std::vector<long> dims;
  if (name == "torus" && split_chip_selection(topology.spec()).second.empty())  // not on a part of one
    dims = parse_torus_dims(name, args, "4x4");
  if (dims.size() != 2)
    throw InputError("ring-2d runs on a two-dimensional torus (torus:XxY), not on " + topology.spec());
  return dims.front();
}

class TorusRing2d : public Algorithm {
 public:
  TorusRing2d() : rings_(make_hierarchical(kTorusPhases, "auto", true, true)) {}
  bool runs_on_groups() const override { return false; }
  void place(const Topology& topology) override {
    rings_ = make_hierarchical(kTorusPhases, std::to_string(torus_row_length(topology)), true, true);
    rings_->place(topology);
  }
  void run(Chip& me) const override { rings_->run(me); }
  double model_s(const CostInput& in) const override { return rings_->model_s(in); }

 private:
  std::unique_ptr<Algorithm> rings_;  // the hierarchical rings over the rows
};

}  // namespace

AlgorithmEntry torus_ring_2d_allreduce() {
  return {"allreduce", "ring-2d", "rings along a 2D torus's rows, then its columns, and back (TPU's 2D)",
          [](const ParamSet&) { return std::make_unique<TorusRing2d>(); }};
}

}  // namespace ultrasim
