#include "workloads/chip_model.hpp"

#include <algorithm>
#include <vector>

#include "topology/base/errors.hpp"
#include "topology/base/suggest.hpp"

namespace ultrasim {

namespace {

// The chip model's own: peaks per dtype, efficiencies, fixed costs, the overlap share.
std::vector<ParamSpec> chip_model_params() {
  return {
      {"chip_flops",
       "2.517e15",
       Unit::kRatio,
       "a chip's dense peak at 8 bits (FP8 / MXFP8), FLOP/s",
       "hardware.md [AWS]: Trainium3 2,517 TFLOP/s MXFP8/MXFP4",
       {},
       Range{0, 1e18, true}},
      {"bf16_flops_ratio",
       "0.2666",
       Unit::kRatio,
       "the 16-bit (BF16) dense peak as a fraction of chip_flops",
       "hardware.md [AWS]: Trainium3 671 TFLOP/s BF16 / 2,517 MXFP8",
       {},
       Range{0, 4, true}},
      {"fp4_flops_ratio",
       "1",
       Unit::kRatio,
       "the 4-bit (FP4 / MXFP4) dense peak as a fraction of chip_flops; 0: the chip has no 4-bit units",
       "hardware.md [AWS]: Trainium3 2,517 TFLOP/s MXFP8/MXFP4",
       {},
       Range{0, 8, false}},
      {"compute_efficiency", "0.6", Unit::kRatio, "fraction of the dtype's peak a large GEMM reaches",
       "assumption (large GEMMs reach 50-70 % of peak)"},
      {"gemm_half_rows",
       "0",
       Unit::kRatio,
       "GEMM rows (tokens) at which a GEMM reaches half of compute_efficiency; 0: every shape reaches it",
       "assumption: the plain roofline (chip profiles set it)",
       {},
       Range{0, 1e6, false}},
      {"prefill_attention_efficiency", "0.6", Unit::kRatio,
       "fraction of the peak prefill attention's score FLOPs reach", "assumption, as compute_efficiency"},
      {"decode_attention_efficiency", "0.6", Unit::kRatio,
       "fraction of the peak decode attention's score FLOPs reach (MLA absorbed: compute-heavy)",
       "assumption, as compute_efficiency"},
      {"hbm_efficiency", "1", Unit::kRatio, "fraction of hbm_bandwidth that streaming kernels reach",
       "assumption: the plain roofline (chip profiles set it)"},
      {"kernel_overhead",
       "0s",
       Unit::kTime,
       "a kernel launch's fixed cost on the chip",
       "assumption: none (chip profiles set it)",
       {},
       Range{0, 1, false}},
      {"layer_overhead",
       "0s",
       Unit::kTime,
       "fixed cost per transformer layer beyond its kernels",
       "assumption: none (chip profiles set it)",
       {},
       Range{0, 1, false}},
      {"step_overhead",
       "0s",
       Unit::kTime,
       "host and framework time per serving step (scheduling, sampling)",
       "assumption: none (chip profiles set it)",
       {},
       Range{0, 10, false}},
      {"comm_share",
       "0",
       Unit::kRatio,
       "fraction of the chip's compute a communication kernel occupies while micro-batches overlap",
       "assumption: none (chip profiles set it)",
       {},
       Range{0, 1, false}},
  };
}

}  // namespace

std::vector<ParamSpec> chip_params() {
  std::vector<ParamSpec> out = chip_model_params();
  const std::vector<ParamSpec> rest{
      // HBM, energy and price
      {"hbm_bandwidth", "4.9TBps", Unit::kRate, "a chip's HBM bandwidth",
       "hardware.md [AWS]: Trainium3 HBM3e 4.9 TB/s"},
      {"chip_power", "1000", Unit::kRatio, "a chip's power while the layer runs, W",
       "hardware.md [3P]: ~1 kW reported for Trainium3, no AWS figure"},
      {"switch_power", "100", Unit::kRatio, "a switch's power, W",
       "assumption: no public NeuronSwitch-v1 figure"},
      {"link_energy", "5", Unit::kRatio, "energy per bit per link crossed, pJ/bit",
       "assumption: PCIe Gen6-class SerDes, about 5 pJ/bit"},
      {"ultraserver_price_per_hour", "360", Unit::kRatio, "price of one UltraServer per hour, USD",
       "assumption: no public Trn3 UltraServer price (2.50 USD per chip-hour)"},
      {"ultraserver_chips", "144", Unit::kCount,
       "chips the price buys (cost scales with the topology's chips)",
       "hardware.md [AWS]: a Trn3 Gen2 UltraServer has 144 chips"},
  };
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

namespace {

struct DtypeInfo {
  const char* name;
  int bits;
  double bytes;
};
// mxfp4: 32 elements share an 8-bit scale (OCP MX spec); nvfp4: 16 share an FP8 scale (NVIDIA).
constexpr DtypeInfo kDtypes[] = {{"float32", 32, 4},    {"float16", 16, 2},  {"bfloat16", 16, 2},
                                 {"float8", 8, 1},      {"int8", 8, 1},      {"float4", 4, 0.5},
                                 {"mxfp4", 4, 0.53125}, {"nvfp4", 4, 0.5625}};

const DtypeInfo& dtype_info(const std::string& dtype) {
  std::vector<std::string> known;
  for (const auto& d : kDtypes) {
    if (dtype == d.name) return d;
    known.push_back(d.name);
  }
  throw InputError(unknown_name_message("dtype", dtype, known));
}

}  // namespace

int dtype_bits(const std::string& dtype) {
  return dtype_info(dtype).bits;
}
double dtype_bytes(const std::string& dtype) {
  return dtype_info(dtype).bytes;
}

ChipModel::ChipModel(const ParamSet& p)
    : flops_(p.number("chip_flops")),
      bf16_(p.number("bf16_flops_ratio")),
      fp4_(p.number("fp4_flops_ratio")),
      gemm_eff_(p.number("compute_efficiency")),
      half_rows_(p.number("gemm_half_rows")),
      prefill_eff_(p.number("prefill_attention_efficiency")),
      decode_eff_(p.number("decode_attention_efficiency")),
      hbm_(p.number("hbm_bandwidth") * p.number("hbm_efficiency")),
      kernel_s_(p.number("kernel_overhead")),
      layer_s_(p.number("layer_overhead")),
      step_s_(p.number("step_overhead")),
      comm_share_(p.number("comm_share")) {}

double ChipModel::peak(const std::string& dtype) const {
  switch (dtype_bits(dtype)) {
    case 4:
      if (fp4_ <= 0)
        throw InputError("dtype " + dtype + ": this chip has no 4-bit units (fp4_flops_ratio 0)");
      return flops_ * fp4_;
    case 8:
      return flops_;
    case 16:
      return flops_ * bf16_;
    default:
      return flops_ * bf16_ / 2;  // 32 bits: half the 16-bit rate (assumption, as TF32 on NVIDIA)
  }
}

void ChipModel::check_dtype(const std::string& dtype, const std::string& what) const {
  with_context(what, [&] { return peak(dtype); });
}

ChipTime ChipModel::time(const ChipWork& w) const {
  ChipTime t;
  if (w.gemm_flops > 0) {
    const double rows = std::max(w.rows, 1.0);
    const double shape = half_rows_ > 0 ? rows / (rows + half_rows_) : 1.0;
    t.compute_s += w.gemm_flops / (peak(w.gemm_dtype) * gemm_eff_ * shape);
  }
  if (w.attention_flops > 0)
    t.compute_s += w.attention_flops / (peak(w.attention_dtype) * (w.decode ? decode_eff_ : prefill_eff_));
  if (w.prefill_attention_flops > 0)
    t.compute_s += w.prefill_attention_flops / (peak(w.attention_dtype) * prefill_eff_);
  t.memory_s = w.bytes / hbm_;
  t.fixed_s = w.kernels * kernel_s_;
  return t;
}

double ChipModel::overlapped_seconds(double compute_s, double comm_s) const {
  return std::max(comm_s, compute_s + comm_share_ * comm_s);
}

}  // namespace ultrasim
