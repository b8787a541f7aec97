// NVLS all-reduce over every switch plane (NVIDIA NVLink SHARP; Graham et al., SHArP, COMHPC 2016 for the
// idea): each chip cuts its buffer over all the reducing switches it is linked to, in proportion to its
// lanes to each (as NVLink sprays bytes over the planes); every switch adds its slice from all chips and
// multicasts the sum back, all planes at once. Each chip sends its buffer once and receives the sum once,
// over all its links (switch-reduce uses one switch per chip).
//   slots: L x D, L = a chip's lanes to the planes (18 on nvl72 and hgx-h100), D = pipeline_chunks;
//          slot d L + j is lane j's share of slice d; plane k owns its lanes' slots of every slice.
//   warm up: min(buffer, W) / R of chip time (the preset's nvls_warmup_bytes W and _bandwidth R);
//   for d = 0 .. D-1: for every plane k: push plane k's slots of slice d to switch k, asking their sums;
//                     wait until those uploads have left;
//   wait for every sum.
// model_s: the planes are independent (each its own chip link and switch engine), each the pipelined
// chain of switch-reduce's single group on its port (β_k, α_k = link latency + half the switch's):
// slice d leaves at Σ_{e<=d} b_ke/β_k, is ready at the switch α_k + overhead later, the engine adds it in
// b_kd/R (one slice at a time), its sum reaches the chip b_kd/β_k after the previous one's, plus
// α_k + overhead; T = max_k of the last slice's arrival. Exact where every chip links to every plane
// alike (nvl72, hgx-h100, switch:N), which place() requires. The warm-up comes first, on every chip alike,
// so it adds to T.
#include <algorithm>
#include <map>
#include <stdexcept>

#include "collectives/chain.hpp"
#include "topology/base/errors.hpp"
#include "topology/registry.hpp"

namespace ultrasim {
namespace {

class Nvls : public Algorithm {
 public:
  explicit Nvls(int depth) : depth_(depth) {}
  int chunks(int p) const override { return lanes() * depth_; }
  bool runs_on_groups() const override { return false; }

  // The planes: the reducing switches chip 0 links to, with its lanes and link to each; every chip must
  // link to the same switches with the same lanes and rate.
  void place(const Topology& topology) override {
    require_reducing_switches(topology, "nvls");
    engine_rate_ = switch_reduce_of(topology.params()).rate;
    const NvlsParams nvls = nvls_of(topology.params());
    warmup_bytes_ = nvls.warmup_bytes;
    warmup_rate_ = nvls.warmup_rate;
    planes_.clear();
    for (int r = 0; r < topology.chip_count(); ++r) {
      std::map<Vertex, Plane> mine;  // by switch vertex, links to one switch bundled
      for (auto [e, end] = boost::out_edges(topology.chip(r), topology.graph()); e != end; ++e) {
        const Vertex sw = boost::target(*e, topology.graph());
        if (topology.node(sw).kind != NodeKind::kSwitch) continue;
        const Link& link = topology.link(*e);
        Plane& plane = mine[sw];
        plane.lanes += link.lanes, plane.bandwidth += link.bandwidth();
        plane.latency = link.latency + topology.node(sw).latency / 2;
      }
      std::vector<Plane> planes;
      for (auto& [sw, plane] : mine) {
        plane.sw = static_cast<int>(std::find(topology.switches().begin(), topology.switches().end(), sw) -
                                    topology.switches().begin());
        planes.push_back(plane);
      }
      if (r == 0) planes_ = planes;
      if (planes.empty() || planes != planes_)
        throw InputError(
            "nvls needs every chip linked alike to the same switch planes (one NVLink domain, as "
            "nvl72 or hgx-h100); chip " +
            std::to_string(r) + " of " + topology.spec() + " is not: use switch-reduce");
    }
    lane_plane_.clear();
    for (std::size_t k = 0; k < planes_.size(); ++k)
      lane_plane_.insert(lane_plane_.end(), planes_[k].lanes, k);
  }

  void run(Chip& me) const override {
    const std::vector<int> everyone = slot_range(0, me.size());
    const int planes = std::max<int>(1, static_cast<int>(planes_.size()));
    std::uint64_t buffer = 0;
    for (int s = 0; s < chunks(me.size()); ++s) buffer += me.slot_bytes(s);
    if (const double w = warmup(buffer); w > 0) me.compute(w, "nvls warm-up");
    std::vector<RequestPtr> results;
    for (int d = 0; d < depth_; ++d) {
      std::vector<RequestPtr> sent;
      for (int k = 0; k < planes; ++k) {
        const std::vector<int> slots = plane_slots(k, d);
        auto requests =
            me.switch_reduce(planes_.empty() ? 0 : planes_[k].sw, everyone, d * planes + k, slots, slots);
        sent.push_back(requests.sent);
        results.push_back(requests.result);
      }
      me.wait(sent);
    }
    me.wait(results);
    for (const auto& result : results) me.copy(result);
  }

  double model_s(const CostInput& in) const override {
    if (in.p < 2) return 0;
    if (planes_.empty()) throw std::logic_error("nvls: model_s before place()");
    const std::vector<std::uint64_t> slots = even_chunks(in.bytes, chunks(in.p));
    double slowest = 0;  // from the end of the warm-up
    for (std::size_t k = 0; k < planes_.size(); ++k) {
      const Plane& port = planes_[k];
      double sent = 0, engine = 0, down = 0;
      for (int d = 0; d < depth_; ++d) {
        std::uint64_t b = 0;
        for (int s : plane_slots(static_cast<int>(k), d)) b += slots[s];
        sent += static_cast<double>(b) / port.bandwidth;
        engine = std::max(sent + port.latency + in.transfer_overhead, engine) +
                 (engine_rate_ ? b / *engine_rate_ : 0.0);
        down = std::max(down, engine) + static_cast<double>(b) / port.bandwidth;
      }
      slowest = std::max(slowest, down + port.latency + in.transfer_overhead);
    }
    return warmup(in.bytes) + slowest;
  }

 private:
  double warmup(std::uint64_t buffer) const {
    return warmup_rate_ ? std::min<double>(static_cast<double>(buffer), warmup_bytes_) / *warmup_rate_ : 0.0;
  }
  struct Plane {
    int sw = 0, lanes = 0;
    double bandwidth = 0, latency = 0;  // of the chip's links to it; latency includes half the switch's
    bool operator==(const Plane& o) const {
      return sw == o.sw && lanes == o.lanes && bandwidth == o.bandwidth && latency == o.latency;
    }
  };
  int lanes() const { return std::max<int>(1, static_cast<int>(lane_plane_.size())); }
  // Plane k's slots of slice d: the slots of its lanes (every slot of the slice without planes: the fake).
  std::vector<int> plane_slots(int k, int d) const {
    std::vector<int> out;
    for (int j = 0; j < lanes(); ++j)
      if (lane_plane_.empty() || lane_plane_[j] == static_cast<std::size_t>(k))
        out.push_back(d * lanes() + j);
    return out;
  }
  int depth_;
  std::optional<double> engine_rate_;    // nullopt: the switches add at line rate
  double warmup_bytes_ = 0;              // the preset's NVLS warm-up (topology/registry.hpp: nvls_of)
  std::optional<double> warmup_rate_;    // nullopt: no warm-up
  std::vector<Plane> planes_;            // after place()
  std::vector<std::size_t> lane_plane_;  // each lane's plane
};

}  // namespace

AlgorithmEntry nvls_allreduce() {
  return {"allreduce",
          "nvls",
          "every switch plane adds its slice of all buffers and multicasts the sum (NVLS over all planes)",
          [](const ParamSet& params) {
            return std::make_unique<Nvls>(pipeline_chunks_table().read(params).chunks);
          },
          pipeline_chunks_table().specs(),
          /*posts_to_all=*/true,
          /*in_switch_reduction=*/true};
}

}  // namespace ultrasim
