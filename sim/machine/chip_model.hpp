// A chip's compute, priced: what a kernel of each operation class reaches of the chip's peaks, and the
// fixed costs around the kernels. Free of SimGrid. The serving step (workloads/serving/) and the MoE
// layer's experts (workloads/moe/moe.hpp) describe each chip's work in a segment as a ChipWork; the ChipModel
// built from the run's parameters (chip_params(), a chip profile sets them) turns it into seconds.
//
// A segment's kernels on one chip (they run back to back; their compute and HBM traffic overlap as one
// roofline, the model's granularity):
//   compute_s = gemm_flops / (peak(gemm_dtype) x compute_efficiency x rows / (rows + gemm_half_rows))
//             + attention_flops / (peak(attention_dtype) x {prefill,decode}_attention_efficiency)
//             + prefill_attention_flops / (peak(attention_dtype) x prefill_attention_efficiency)
//   memory_s  = bytes / (hbm_bandwidth x hbm_efficiency)
//   seconds   = max(compute_s, memory_s) + kernels x kernel_overhead
// peak(dtype): chip_flops at 8 bits (float8), x bf16_flops_ratio at 16 bits, x fp4_flops_ratio at 4 bits
// (float4, mxfp4, nvfp4; a chip without 4-bit units has the ratio 0 and refuses them).
// rows: the GEMMs' M (the tokens through them; an expert's tokens for the MoE experts). gemm_half_rows 0
// prices every shape at compute_efficiency. Around the segments: layer_overhead per layer and
// step_overhead per step and request_overhead per request of a data-parallel group (host and framework),
// on the step's critical path but for the share host_overlap hides behind the chips (host_seconds).
// Micro-batch overlap: a communication kernel takes comm_share of the chip's compute units while it
// runs, so compute C beside communication M takes max(M, C + comm_share x M) instead of max(C, M)
// (overlapped_seconds).
// With the efficiencies 1, gemm_half_rows 0, bf16_flops_ratio 1 and no fixed costs this is the plain
// roofline max(flops / chip_flops, bytes / hbm_bandwidth) (tested to 1e-12).
// Kernel tables (kernel_tables.hpp; the chip parameter kernel_tables names them): a ChipWork may list its
// operations with their shapes (ChipWork::ops, each with its share of the work's FLOPs, bytes and
// kernels). An operation inside the tables costs its interpolated time, at least its class's floor
// (gemm_floor for GEMMs, attention_floor for attention), and leaves the roofline; the rest of the work,
// the operations outside the tables with it (they fall back), is priced as above:
//   seconds = max(compute_s, memory_s) + fixed_s + the tabled operations' times
// With no tables every operation falls back and the time is the roofline's, bit for bit.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/machine/kernel_tables.hpp"
#include "topology/base/param_table.hpp"
#include "topology/base/params.hpp"

namespace ultrasim {

// The chip, energy and price parameters (settable with --set; defaults with their sources; a serving
// chip profile sets them per chip).
struct ChipParams {
  // The chip model's own: peaks per dtype, efficiencies, fixed costs, the overlap share.
  double chip_flops = 0;        // dense peak at 8 bits, FLOP/s
  double bf16_flops_ratio = 0;  // the 16-bit peak / chip_flops
  double fp4_flops_ratio = 0;   // the 4-bit peak / chip_flops; 0: no 4-bit units
  double compute_efficiency = 0, gemm_half_rows = 0;
  double prefill_attention_efficiency = 0, decode_attention_efficiency = 0;
  double hbm_efficiency = 0;
  double kernel_overhead = 0, layer_overhead = 0, step_overhead = 0;  // s
  double request_overhead = 0;  // s of host time per request of a data-parallel group per step
  double host_overlap = 0;      // share of the host's time hidden behind the chips' (host_seconds)
  double comm_share = 0;
  double training_efficiency = 1;  // training's GEMM and attention kernels, of the rates above
  // Kernel tables by shape (kernel_tables()), and the least time of a tabled kernel per class.
  std::string kernel_tables = "none";
  double gemm_floor = 0, attention_floor = 0;  // s
  // HBM, energy and price.
  double hbm_bandwidth = 0;                 // B/s
  double chip_power = 0, switch_power = 0;  // W (chip_power: busy, compute-bound kernels)
  double link_energy = 0;                   // pJ/bit per link crossed
  // Power follows what a chip is doing (chip_power x the share of its class; chip_power_w below):
  // idle, HBM-bound kernels, waiting on communication or fixed costs; capped at power_cap (0: none).
  double idle_power_share = 1, hbm_power_share = 1, wait_power_share = 1;
  double power_cap = 0;   // W
  double host_power = 0;  // W per host of host_chips chips (CPUs, DRAM, NICs, fans, supplies)
  int host_chips = 8;
  double pue = 1;                         // facility energy / the hosts' and fabric's energy
  double ultraserver_price_per_hour = 0;  // USD
  int ultraserver_chips = 0;              // chips the price buys
};
const ParamTable<ChipParams>& chip_table();
// chip_table().specs().
std::vector<ParamSpec> chip_params();
// The chip parameters in effect in `params` (which declares chip_params()).
ChipParams chip_of(const ParamSet& params);

// A chip's mean power (W) over a step whose seconds went to `bound_s` (resource -> s: compute, hbm,
// link:TIER, latency, overhead, as a StepTime's): chip_power while compute-bound, x hbm_power_share while
// HBM-bound, x wait_power_share otherwise, weighted by seconds, at most power_cap (when > 0). With every
// share 1 and no cap it is chip_power exactly.
double chip_power_w(const ChipParams& c, const std::map<std::string, double>& bound_s);
// A chip's power with no work: chip_power x idle_power_share (at most power_cap).
double idle_power_w(const ChipParams& c);

// One chip's work in one segment, by operation class.
struct ChipWork {
  double gemm_flops = 0;  // dense and grouped GEMMs (weights x activations)
  double rows = 0;        // the GEMMs' M: tokens through them (0 with no GEMM)
  std::string gemm_dtype = "float8";
  double attention_flops = 0;  // the scores (QK^T, PV) over the context
  bool decode = true;          // attention_flops are decode attention (one query token over the cache)
  double prefill_attention_flops = 0;  // prefill attention's scores beside them (a mixed step's chunks)
  std::string attention_dtype = "bfloat16";
  double bytes = 0;  // HBM traffic: weights, the KV cache, activations in and out
  int kernels = 0;   // kernel launches
  // The operations a kernel table may price, each with its part of the fields above (empty: none).
  std::vector<KernelOp> ops;

  double flops() const { return gemm_flops + attention_flops + prefill_attention_flops; }
  bool empty() const {
    return gemm_flops == 0 && attention_flops == 0 && prefill_attention_flops == 0 && bytes == 0 &&
           kernels == 0;
  }
};

// A ChipWork priced.
struct ChipTime {
  double compute_s = 0, memory_s = 0, fixed_s = 0;
  // The operations priced from tables: their time, split by what bounds each (its own roofline).
  double table_compute_s = 0, table_memory_s = 0;
  unsigned tabled = 0, fell_back = 0;  // classes (kernel_class_bit) priced from tables / by the roofline
  double seconds() const {
    return (compute_s > memory_s ? compute_s : memory_s) + fixed_s + table_compute_s + table_memory_s;
  }
  bool memory_bound() const { return memory_s + table_memory_s > compute_s + table_compute_s; }
};

class ChipModel {
 public:
  // The chip_params() values of `params`.
  explicit ChipModel(const ParamSet& params);
  ChipTime time(const ChipWork& work) const;
  // The dense peak at `dtype`; InputError when the chip has no units of that width or the dtype is unknown.
  double peak(const std::string& dtype) const;
  // Throws InputError naming the chip parameter when `dtype` cannot run on this chip.
  void check_dtype(const std::string& dtype, const std::string& what) const;
  double layer_overhead() const { return c_.layer_overhead; }
  double step_overhead() const { return c_.step_overhead; }
  // The host's part of a step whose chips take `chips_s` and whose busiest data-parallel group holds
  // `requests`: host = step_overhead + request_overhead x requests, of which host_overlap x min(host,
  // chips_s) hides behind the chips (host_overlap 1: max(chips_s, host) - chips_s).
  double host_seconds(double chips_s, double requests) const;
  double comm_share() const { return c_.comm_share; }
  double training_efficiency() const { return c_.training_efficiency; }
  // Compute `compute_s` beside communication `comm_s` that occupies comm_share of the chip.
  double overlapped_seconds(double compute_s, double comm_s) const;
  const KernelTables& tables() const { return *tables_; }

 private:
  ChipTime roofline(const ChipWork& work) const;
  ChipParams c_;
  std::shared_ptr<const KernelTables> tables_;
};

// The width of a dtype's multiplier, in bits (4, 8, 16, 32); InputError for an unknown one.
int dtype_bits(const std::string& dtype);
// Bytes per element in HBM, with the block scales of the 4-bit formats (mxfp4: one byte per 32 elements,
// nvfp4: one byte per 16) and the 8/16/32-bit formats' sizes.
double dtype_bytes(const std::string& dtype);

}  // namespace ultrasim
