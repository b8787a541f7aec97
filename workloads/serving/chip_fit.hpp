// Fitting a chip profile to measured kernel times (`ultrasim calibrate-chip`): the efficiencies and fixed
// costs of the chip model (sim/machine/chip_model.hpp) that the measurements inform, the peaks and
// everything else kept from a base profile. Free of SimGrid.
//
// Measurements: a CSV (a header naming the columns) or a JSON array of objects with the same fields, or
// a PyTorch profiler (Kineto) trace:
//   operation  gemm | grouped_gemm | prefill_attention | decode_attention | memory
//   seconds    the kernel's measured time (> 0, at most 1e3 s)
//   m, n, k    a GEMM's shape (gemm, grouped_gemm): flops 2 m n k, bytes (m k + n k) x dtype bytes + m n x 2
//              (a 16-bit output), rows m; grouped_gemm with `groups` g: g times the flops and bytes
//   flops, bytes, rows   the work given directly (attention, memory; or a GEMM without its shape)
//   dtype      the multiplier's dtype (default float8 for GEMMs, bfloat16 for attention)
//   kernels    kernel launches in the time (default 1)
//   role       fit (default) | held-out;  source   free text
// A Kineto trace (a JSON object with "traceEvents", recorded with record_shapes=True): each aten::mm,
// aten::addmm, aten::bmm and aten::_scaled_mm with its "Input Dims" becomes a gemm point from the GPU
// kernels it launched (matched by "External id" / correlation), summed; memcpy/memset kernels with their
// bytes become memory points; other operations are skipped and counted.
//
// The fit minimises the mean squared log error of the model's time against the measured one over the
// fitted points, by coordinate descent (golden section per parameter, 40 sweeps at most, deterministic).
// Parameters, each fitted only where some fitted point informs it:
//   gemm, grouped_gemm   compute_efficiency (0.01, 1], gemm_half_rows [0, 8192], hbm_efficiency,
//   kernel_overhead memory               hbm_efficiency (0.01, 1], kernel_overhead [0, 100 us]
//   prefill_attention    prefill_attention_efficiency;  decode_attention  decode_attention_efficiency
#pragma once

#include <string>
#include <vector>

#include "sim/machine/chip_model.hpp"
#include "workloads/serving/serving.hpp"

namespace ultrasim {

struct KernelPoint {
  std::string operation, source;
  ChipWork work;
  double seconds = 0;
  bool held_out = false;
};

// The points of a measurement file (CSV, JSON array or Kineto trace); InputError naming the file and row.
std::vector<KernelPoint> read_kernel_points(const std::string& path);

struct ChipFitPoint {
  KernelPoint point;
  double before_s = 0, after_s = 0;
};
struct ChipFit {
  ChipProfile base, fitted;
  std::vector<std::string> parameters;  // the ones fitted
  std::vector<ChipFitPoint> points;
  double fit_before = 0, fit_after = 0, held_before = 0, held_after = 0;  // geometric-mean |error|
  int skipped = 0;                                                        // trace operations not used
};

// Fits `base` (with `overrides` applied) to `points`; every `hold_out_every`-th point (1-based, 0: none)
// is held out besides those marked. InputError when no point is left to fit or none informs a parameter.
ChipFit fit_chip(const ChipProfile& base, std::vector<KernelPoint> points, int hold_out_every,
                 const std::vector<std::pair<std::string, std::string>>& overrides, const std::string& from);

}  // namespace ultrasim
