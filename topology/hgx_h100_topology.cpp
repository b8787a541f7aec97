// hgx-h100 — an NVIDIA HGX H100 board: 8 GPUs, 4 NVSwitch chips; each GPU has 18 NVLink 4 links of
// 25 GB/s per direction (450 GB/s per GPU), split 5/4/4/5 over the four switch chips. Each GPU-switch
// bundle is one graph link of 5 or 4 lanes. GPUs do not forward; a message is striped over the four
// switches by default (multipath=auto: stripe).
// Source: ../shared/reference/hardware.md [NVIDIA, 3P].
//
//         nvswitch0     nvswitch1     nvswitch2     nvswitch3
//          5 |  ...      4 |  ...      4 |  ...      5 |  ...     (links per GPU in each bundle)
//         gpu0  gpu1  ...  gpu7                                    (every GPU to every switch chip)
#include "topology/base/errors.hpp"
#include "topology/registry.hpp"

namespace ultrasim {
namespace {

constexpr int kSwitches = 4;  // NVSwitch chips on the board [NVIDIA]

// hgx-h100's parameters, typed; hgx_table() declares each with its default and source.
struct HgxParams {
  int gpus = 0;
  int nvswitch0_links = 0, nvswitch1_links = 0, nvswitch2_links = 0, nvswitch3_links = 0;
  NvlinkParams link;
};

const ParamTable<HgxParams>& hgx_table() {
  using P = HgxParams;
  const std::string split = "hardware.md [NVIDIA, 3P]: 18 links per GPU split 5/4/4/5";
  static const ParamTable<P> table =
      ParamTable<P>{}
          .add({"gpus", "8", Unit::kCount, "GPUs on the board", "hardware.md [NVIDIA]"}, &P::gpus)
          .add({"nvswitch0_links", "5", Unit::kCount, "NVLinks from each GPU to NVSwitch chip 0", split},
               &P::nvswitch0_links)
          .add({"nvswitch1_links", "4", Unit::kCount, "NVLinks from each GPU to NVSwitch chip 1", split},
               &P::nvswitch1_links)
          .add({"nvswitch2_links", "4", Unit::kCount, "NVLinks from each GPU to NVSwitch chip 2", split},
               &P::nvswitch2_links)
          .add({"nvswitch3_links", "5", Unit::kCount, "NVLinks from each GPU to NVSwitch chip 3", split},
               &P::nvswitch3_links)
          .nest(nvlink_table(
                    "25GBps", "hardware.md [NVIDIA]: NVLink 4, 18 links, 450 GB/s per direction per GPU",
                    "NVIDIA/nccl-tests#212 (NCCL maintainer): ~370 GB/s effective of 450 GB/s line rate "
                    "(protocol overhead ~20%)",
                    "84.15GBps",
                    "fitted: nvls all-reduce at 8 GiB = 478.87 GB/s busbw on 8 H100 (Azure ND H100 v5 "
                    "nccl-tests, NCCL 2.18.5, NVLS; results/validation/), with the warm-up",
                    NvlsWarmup{"53.1MB", "530.1GBps",
                               "fitted with switch_reduce_bandwidth: the rate on the 16 MiB point (234.45 "
                               "GB/s busbw), the bytes on 256 MiB (423.38 GB/s; Azure ND H100 v5 "
                               "nccl-tests, NCCL 2.18.5; results/validation/); the cause is not published"}),
                &P::link);
  return table;
}

// hgx-h100's topology for parameters `params` (`args` must be empty).
Topology hgx_build(const std::string& spec, const std::string& args, const ParamSet& params) {
  if (!args.empty()) throw InputError("topology hgx-h100 takes no arguments; got 'hgx-h100:" + args + "'");
  const HgxParams p = hgx_table().read(params);
  const NvlinkParams& l = p.link;
  check_topology_size(spec, p.gpus);
  Topology t(spec, params, {"nvlink"});
  t.set_chip_forwarding(false);
  t.set_multipath_default("stripe");
  const int lanes[kSwitches] = {p.nvswitch0_links, p.nvswitch1_links, p.nvswitch2_links, p.nvswitch3_links};
  std::vector<Vertex> switches;
  for (int s = 0; s < kSwitches; ++s)
    switches.push_back(t.add_switch("nvswitch" + std::to_string(s), l.switch_latency));
  for (int g = 0; g < p.gpus; ++g) {
    Vertex gpu = t.add_chip(0);
    for (int s = 0; s < kSwitches; ++s)
      t.add_link(gpu, switches[s], "nvlink", lanes[s] * l.bandwidth, l.latency, l.efficiency, lanes[s]);
  }
  return t;
}

}  // namespace

GeneratorEntry hgx_h100_generator() {
  GeneratorEntry entry{"hgx-h100", "hgx-h100",
                       "NVIDIA HGX H100: 8 GPUs, 4 NVSwitch chips, 18 NVLinks per GPU split 5/4/4/5",
                       hgx_table().specs(), hgx_build};
  // Exact, as for nvl72: four disjoint stars over all GPUs; floor(p/2) x a GPU's delivered bandwidth.
  entry.bisection = [](const Topology& t) -> std::optional<double> {
    return (t.chip_count() / 2) * t.injection_bandwidth(0);
  };
  entry.stack = "nccl";  // collectives/stacks/nccl.json
  return entry;
}

}  // namespace ultrasim
