// nvl72 — NVIDIA GB200 NVL72: 72 GPUs in 18 compute trays of 4 (server = tray), 18 NVSwitch chips in
// 9 switch trays of 2, and one NVLink 5 link from every GPU to every switch chip (18 links x 50 GB/s =
// 900 GB/s per GPU per direction). GPUs do not forward; every GPU pair is two links apart through any of
// the 18 switch chips, so a message is striped over them by default (multipath=auto: stripe).
// Source: ../shared/reference/hardware.md [NVIDIA docs, 3P].
//
//   switch_tray0_chip0  switch_tray0_chip1  ...  switch_tray8_chip1     18 NVSwitch chips
//        |  \  ...            |                        |
//   gpu0 .. gpu3 (tray0)   gpu4 .. gpu7 (tray1)  ...  gpu68 .. gpu71    every GPU: a link to each chip
#include "topology/base/errors.hpp"
#include "topology/registry.hpp"

namespace ultrasim {

// NVLink payload efficiency: NCCL's maintainer gives ~370 GB/s effective of 450 GB/s line rate on H100
// NVLink 4 ("protocol overhead ~20%", NVIDIA/nccl-tests issue 212). NVLink 5 keeps the link protocol,
// so nvl72 takes the same figure as an assumption.
ParamTable<NvlinkParams> nvlink_table(const std::string& link_rate, const std::string& rate_source,
                                      const std::string& efficiency_source, const std::string& engine_rate,
                                      const std::string& engine_source, const NvlsWarmup& warmup) {
  ParamSpec reduction = switch_reduction_param(
      "NVSwitch chips reduce and multicast (NVLS: the nvls algorithm over every plane; switch-reduce "
      "uses one switch chip per GPU)",
      "hardware.md [NVIDIA]: NVLS in-switch reduction since NVSwitch 3 (H100); NVIDIA/nccl#1286: "
      "on GB200 NVL72 available to all GPUs");
  reduction.default_value = "true";
  ParamSpec engine = switch_reduce_bandwidth_param(
      "rate at which one NVSwitch chip reduces and multicasts (NVLS), the bound of nvls at large sizes",
      engine_source);
  engine.default_value = engine_rate;
  using P = NvlinkParams;
  return ParamTable<P>{}
      .add({"nvlink_bandwidth", link_rate, Unit::kRate, "raw bandwidth of one NVLink, per direction",
            rate_source},
           &P::bandwidth)
      .add({"nvlink_latency", "182ns", Unit::kTime, "latency of a GPU-to-NVSwitch link",
            "fitted: GPU-switch-GPU 728 ns (2 links + a switch, split 1:2:1 as assumed), so that 8 H100s "
            "under "
            "nccl take 27.05 us for an 8 KiB all-reduce, as measured (Azure ND H100 v5, 0.53 GB/s busbw; "
            "results/validation/); the same on NVLink 5 (assumption)"},
           &P::latency)
      .add({"nvlink_efficiency", "370/450", Unit::kRatio, "payload fraction of the NVLink raw rate",
            efficiency_source},
           &P::efficiency)
      .add({"switch_latency", "364ns", Unit::kTime, "time a flow spends crossing an NVSwitch chip",
            "fitted with nvlink_latency (see there)"},
           &P::switch_latency)
      .nest(switch_reduce_table(std::move(reduction), std::move(engine)), &P::reduce)
      .nest(nvls_table(warmup), &P::nvls);
}

namespace {

// nvl72's parameters, typed; nvl72_table() declares each with its default and source.
struct Nvl72Params {
  int compute_trays = 0, gpus_per_tray = 0, nvswitch_chips = 0;
  NvlinkParams link;
};

const ParamTable<Nvl72Params>& nvl72_table() {
  using P = Nvl72Params;
  static const ParamTable<P> table =
      ParamTable<P>{}
          .add({"compute_trays", "18", Unit::kCount, "compute trays (servers)",
                "hardware.md [NVIDIA]: 72 GPUs"},
               &P::compute_trays)
          .add({"gpus_per_tray", "4", Unit::kCount, "GPUs per compute tray",
                "NVIDIA GB200 NVL72: 2 Grace + 4 Blackwell per tray"},
               &P::gpus_per_tray)
          .add({"nvswitch_chips", "18", Unit::kCount,
                "NVSwitch chips, 2 per switch tray; every GPU links to each",
                "hardware.md [NVIDIA docs, 3P]: 18 chips in 9 trays"},
               &P::nvswitch_chips)
          .nest(nvlink_table(
                    "50GBps", "hardware.md [NVIDIA]: NVLink 5, 18 links x 50 GB/s = 900 GB/s per GPU",
                    "NVIDIA/nccl-tests#212 (NCCL maintainer): ~370 of 450 GB/s on NVLink 4; assumption: "
                    "the same on NVLink 5",
                    "26.23GBps",
                    "fitted: nvls all-reduce at 8 GiB = 834.57 GB/s busbw out-of-place on 72 GPUs "
                    "(coreweave/nccl-tests PR #43, NCCL 2.26.2; results/validation/), with the warm-up",
                    NvlsWarmup{"328.9MB", "530.1GBps",
                               "the rate: hgx-h100's (assumption: the same library's warm-up); the bytes "
                               "fitted with switch_reduce_bandwidth on the 1 GiB point (681.17 GB/s busbw, "
                               "coreweave/nccl-tests PR #43; results/validation/); the cause is not "
                               "published"}),
                &P::link);
  return table;
}

// nvl72's topology for parameters `params` (`args` must be empty).
Topology nvl72_build(const std::string& spec, const std::string& args, const ParamSet& params) {
  if (!args.empty()) throw InputError("topology nvl72 takes no arguments; got 'nvl72:" + args + "'");
  const Nvl72Params p = nvl72_table().read(params);
  const NvlinkParams& l = p.link;
  check_topology_size(spec, static_cast<double>(p.compute_trays) * p.gpus_per_tray);
  Topology t(spec, params, {"nvlink"});
  t.set_chip_forwarding(false);
  t.set_multipath_default("stripe");
  std::vector<Vertex> switches;
  for (int s = 0; s < p.nvswitch_chips; ++s)
    switches.push_back(t.add_switch("switch_tray" + std::to_string(s / 2) + "_chip" + std::to_string(s % 2),
                                    l.switch_latency));
  for (int tray = 0; tray < p.compute_trays; ++tray)
    for (int g = 0; g < p.gpus_per_tray; ++g) {
      Vertex gpu = t.add_chip(tray, 0);
      for (Vertex sw : switches) t.add_link(gpu, sw, "nvlink", l.bandwidth, l.latency, l.efficiency);
    }
  return t;
}

}  // namespace

GeneratorEntry nvl72_generator() {
  GeneratorEntry entry{"nvl72", "nvl72",
                       "NVIDIA GB200 NVL72: 72 GPUs, 18 NVSwitch chips, a link from every GPU to every chip",
                       nvl72_table().specs(), nvl72_build};
  // Exact: each switch chip is a star over all GPUs, whose balanced cut crosses floor(p/2) of its links
  // wherever the chip sits; the stars are disjoint, so the bisection is floor(p/2) x a GPU's delivered
  // bandwidth over all its links.
  entry.bisection = [](const Topology& t) -> std::optional<double> {
    return (t.chip_count() / 2) * t.injection_bandwidth(0);
  };
  entry.stack = "nccl";  // collectives/stacks/nccl.json
  return entry;
}

}  // namespace ultrasim
