#include "sim/machine/chip_model.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "topology/base/errors.hpp"
#include "topology/base/suggest.hpp"

namespace ultrasim {

namespace {

// The chip model's peaks per dtype and efficiencies.
ParamTable<ChipParams> chip_model_table() {
  using C = ChipParams;
  return ParamTable<C>{}
      .add({"chip_flops",
            "2.517e15",
            Unit::kRatio,
            "a chip's dense peak at 8 bits (FP8 / MXFP8), FLOP/s",
            "hardware.md [AWS]: Trainium3 2,517 TFLOP/s MXFP8/MXFP4",
            {},
            Range{0, 1e18, true}},
           &C::chip_flops)
      .add({"bf16_flops_ratio",
            "0.2666",
            Unit::kRatio,
            "the 16-bit (BF16) dense peak as a fraction of chip_flops",
            "hardware.md [AWS]: Trainium3 671 TFLOP/s BF16 / 2,517 MXFP8",
            {},
            Range{0, 4, true}},
           &C::bf16_flops_ratio)
      .add({"fp4_flops_ratio",
            "1",
            Unit::kRatio,
            "the 4-bit (FP4 / MXFP4) dense peak as a fraction of chip_flops; 0: the chip has no 4-bit "
            "units",
            "hardware.md [AWS]: Trainium3 2,517 TFLOP/s MXFP8/MXFP4",
            {},
            Range{0, 8, false}},
           &C::fp4_flops_ratio)
      .add({"compute_efficiency", "0.6", Unit::kRatio, "fraction of the dtype's peak a large GEMM reaches",
            "assumption (large GEMMs reach 50-70 % of peak)"},
           &C::compute_efficiency)
      .add({"gemm_half_rows",
            "0",
            Unit::kRatio,
            "GEMM rows (tokens) at which a GEMM reaches half of compute_efficiency; 0: every shape "
            "reaches it",
            "assumption: the plain roofline (chip profiles set it)",
            {},
            Range{0, 1e6, false}},
           &C::gemm_half_rows)
      .add(
          {"prefill_attention_efficiency", "0.6", Unit::kRatio,
           "fraction of the peak prefill attention's score FLOPs reach", "assumption, as compute_efficiency"},
          &C::prefill_attention_efficiency)
      .add({"decode_attention_efficiency", "0.6", Unit::kRatio,
            "fraction of the peak decode attention's score FLOPs reach (MLA absorbed: compute-heavy)",
            "assumption, as compute_efficiency"},
           &C::decode_attention_efficiency)
      .add({"hbm_efficiency", "1", Unit::kRatio, "fraction of hbm_bandwidth that streaming kernels reach",
            "assumption: the plain roofline (chip profiles set it)"},
           &C::hbm_efficiency);
}

// The serving step's fixed costs and overlap share, and the kernel tables with their floors.
ParamTable<ChipParams> with_fixed_costs(ParamTable<ChipParams> t) {
  using C = ChipParams;
  return std::move(t)
      .add({"kernel_overhead",
            "0s",
            Unit::kTime,
            "a kernel launch's fixed cost on the chip",
            "assumption: none (chip profiles set it)",
            {},
            Range{0, 1, false}},
           &C::kernel_overhead)
      .add({"layer_overhead",
            "0s",
            Unit::kTime,
            "fixed cost per transformer layer beyond its kernels",
            "assumption: none (chip profiles set it)",
            {},
            Range{0, 1, false}},
           &C::layer_overhead)
      .add({"step_overhead",
            "0s",
            Unit::kTime,
            "host and framework time per serving step (scheduling, sampling)",
            "assumption: none (chip profiles set it)",
            {},
            Range{0, 10, false}},
           &C::step_overhead)
      .add({"request_overhead",
            "0s",
            Unit::kTime,
            "host time per request of a data-parallel group per serving step (batch building, sampling, "
            "output processing)",
            "assumption: none (chip profiles set it)",
            {},
            Range{0, 1, false}},
           &C::request_overhead)
      .add({"host_overlap",
            "0",
            Unit::kRatio,
            "share of the host's time per step hidden behind the chips' (1: an overlap scheduler, the "
            "host prepares the next step while the chips run this one; 0: one after the other)",
            "assumption: none (chip profiles set it)",
            {},
            Range{0, 1, false}},
           &C::host_overlap)
      .add({"kernel_tables",
            "none",
            Unit::kChoice,
            "measured kernel times by shape the chip prices operations from: none | a built-in set "
            "(ultrasim list chips) | FILE.csv / FILE.json (sim/machine/kernel_tables.hpp)",
            "assumption: none (chip profiles name theirs)",
            {"none", "NAME"}},
           &C::kernel_tables)
      .add({"gemm_floor",
            "0s",
            Unit::kTime,
            "least time of a GEMM priced from a kernel table",
            "assumption: none (chip profiles set it)",
            {},
            Range{0, 1, false}},
           &C::gemm_floor)
      .add({"attention_floor",
            "0s",
            Unit::kTime,
            "least time of an attention kernel priced from a kernel table",
            "assumption: none (chip profiles set it)",
            {},
            Range{0, 1, false}},
           &C::attention_floor)
      .add({"comm_share",
            "0",
            Unit::kRatio,
            "fraction of the chip's compute a communication kernel occupies while micro-batches overlap",
            "assumption: none (chip profiles set it)",
            {},
            Range{0, 1, false}},
           &C::comm_share);
}

// What training's kernels reach of the rates above (workloads/training/train_model.hpp).
ParamTable<ChipParams> with_training(ParamTable<ChipParams> t) {
  using C = ChipParams;
  return std::move(t).add({"training_efficiency",
                           "1",
                           Unit::kRatio,
                           "share of the GEMM and attention rates above that a training step's kernels reach "
                           "(their forward and backward GEMMs and attention, against the kernels the "
                           "efficiencies were fitted on)",
                           "assumption: 1 (chip profiles set it)",
                           {},
                           kFraction},
                          &C::training_efficiency);
}

// HBM, power (per class of work, the host's, the facility's) and price.
ParamTable<ChipParams> with_power_and_price(ParamTable<ChipParams> t) {
  using C = ChipParams;
  return std::move(t)
      .add({"hbm_bandwidth", "4.9TBps", Unit::kRate, "a chip's HBM bandwidth",
            "hardware.md [AWS]: Trainium3 HBM3e 4.9 TB/s"},
           &C::hbm_bandwidth)
      .add({"chip_power", "1000", Unit::kRatio, "a chip's power while the layer runs, W",
            "hardware.md [3P]: ~1 kW reported for Trainium3, no AWS figure"},
           &C::chip_power)
      .add({"idle_power_share",
            "1",
            Unit::kRatio,
            "a chip's power with no work, as a share of chip_power",
            "assumption: none (every chip at chip_power; chip profiles set it)",
            {},
            Range{0, 1, false}},
           &C::idle_power_share)
      .add({"hbm_power_share",
            "1",
            Unit::kRatio,
            "a chip's power while HBM-bound kernels run, as a share of chip_power",
            "assumption: none (chip profiles set it)",
            {},
            Range{0, 1, false}},
           &C::hbm_power_share)
      .add({"wait_power_share",
            "1",
            Unit::kRatio,
            "a chip's power while it waits on communication or fixed costs, as a share of chip_power",
            "assumption: none (chip profiles set it)",
            {},
            Range{0, 1, false}},
           &C::wait_power_share)
      .add({"power_cap",
            "0",
            Unit::kRatio,
            "a chip's power limit, W (0: none); it bounds power, not speed",
            "assumption: none (MLPerf MaxQ runs set one)",
            {},
            Range{0, 1e5, false}},
           &C::power_cap)
      .add({"host_power",
            "0",
            Unit::kRatio,
            "power of a host besides its chips and the fabric's switches (CPUs, DRAM, NICs, fans, "
            "supply losses), W",
            "assumption: none (chip profiles set it)",
            {},
            Range{0, 1e6, false}},
           &C::host_power)
      .add({"host_chips",
            "8",
            Unit::kCount,
            "chips per host (hosts = ceil(chips / host_chips))",
            "assumption: 8, an HGX board's",
            {},
            Range{1, 1e6, false}},
           &C::host_chips)
      .add({"pue",
            "1",
            Unit::kRatio,
            "power usage effectiveness: the facility's energy / the IT energy",
            "assumption: none (chip profiles set it)",
            {},
            Range{1, 5, false}},
           &C::pue)
      .add({"switch_power", "100", Unit::kRatio, "a switch's power, W",
            "assumption: no public NeuronSwitch-v1 figure"},
           &C::switch_power)
      .add({"link_energy", "5", Unit::kRatio, "energy per bit per link crossed, pJ/bit",
            "assumption: PCIe Gen6-class SerDes, about 5 pJ/bit"},
           &C::link_energy)
      .add({"ultraserver_price_per_hour", "360", Unit::kRatio, "price of one UltraServer per hour, USD",
            "assumption: no public Trn3 UltraServer price (2.50 USD per chip-hour)"},
           &C::ultraserver_price_per_hour)
      .add({"ultraserver_chips", "144", Unit::kCount,
            "chips the price buys (cost scales with the topology's chips)",
            "hardware.md [AWS]: a Trn3 Gen2 UltraServer has 144 chips"},
           &C::ultraserver_chips);
}

}  // namespace

// The chip, energy and price parameters, declared once each with the member they fill: the chip model's
// peaks and efficiencies, its fixed costs and overlap share, then HBM, energy and price.
const ParamTable<ChipParams>& chip_table() {
  static const ParamTable<ChipParams> table =
      with_power_and_price(with_training(with_fixed_costs(chip_model_table())));
  return table;
}

double ChipModel::host_seconds(double chips_s, double requests) const {
  const double host = c_.step_overhead + c_.request_overhead * requests;
  return host - c_.host_overlap * std::min(host, chips_s);
}

double chip_power_w(const ChipParams& c, const std::map<std::string, double>& bound_s) {
  double watts = c.chip_power;
  if (c.hbm_power_share != 1 || c.wait_power_share != 1) {
    double seconds = 0, weighted = 0;
    for (const auto& [resource, s] : bound_s) {
      const double share = resource == "compute" ? 1.0
                           : resource == "hbm"   ? c.hbm_power_share
                                                 : c.wait_power_share;
      seconds += s, weighted += s * share;
    }
    if (seconds > 0) watts = c.chip_power * weighted / seconds;
  }
  return c.power_cap > 0 ? std::min(watts, c.power_cap) : watts;
}

double idle_power_w(const ChipParams& c) {
  const double watts = c.chip_power * c.idle_power_share;
  return c.power_cap > 0 ? std::min(watts, c.power_cap) : watts;
}

std::vector<ParamSpec> chip_params() {
  return chip_table().specs();
}

ChipParams chip_of(const ParamSet& params) {
  return chip_table().read(params);
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

ChipModel::ChipModel(const ParamSet& params) : c_(chip_of(params)), tables_(kernel_tables(c_.kernel_tables)) {
  std::vector<const std::string*> checked;  // a row the chip cannot run: the first of each dtype names it
  for (const KernelRow& r : tables_->rows()) {
    if (std::any_of(checked.begin(), checked.end(), [&](const std::string* d) { return *d == r.dtype; }))
      continue;
    with_context(r.where + ", field 'dtype'", [&] { return peak(r.dtype); });
    checked.push_back(&r.dtype);
  }
}

double ChipModel::peak(const std::string& dtype) const {
  switch (dtype_bits(dtype)) {
    case 4:
      if (c_.fp4_flops_ratio <= 0)
        throw InputError("dtype " + dtype + ": this chip has no 4-bit units (fp4_flops_ratio 0)");
      return c_.chip_flops * c_.fp4_flops_ratio;
    case 8:
      return c_.chip_flops;
    case 16:
      return c_.chip_flops * c_.bf16_flops_ratio;
    default:
      return c_.chip_flops * c_.bf16_flops_ratio /
             2;  // 32 bits: half the 16-bit rate (assumption, as TF32 on NVIDIA)
  }
}

void ChipModel::check_dtype(const std::string& dtype, const std::string& what) const {
  with_context(what, [&] { return peak(dtype); });
}

ChipTime ChipModel::time(const ChipWork& work) const {
  if (tables_->empty() || work.ops.empty()) {
    ChipTime t = roofline(work);
    for (const KernelOp& op : work.ops) t.fell_back |= kernel_class_bit(op.op);
    return t;
  }
  ChipWork rest = work;  // what the tables do not price
  rest.ops.clear();
  double table_compute = 0, table_memory = 0;
  unsigned tabled = 0, fell_back = 0;
  for (const KernelOp& op : work.ops) {
    const auto s = tables_->seconds(op);
    if (!s) {
      fell_back |= kernel_class_bit(op.op);
      continue;
    }
    tabled |= kernel_class_bit(op.op);
    const bool gemm = is_gemm(op.op);
    const double seconds = std::max(*s, gemm ? c_.gemm_floor : c_.attention_floor);
    (op.bytes / c_.hbm_bandwidth > op.flops / peak(op.dtype) ? table_memory : table_compute) += seconds;
    if (gemm)
      rest.gemm_flops = std::max(0.0, rest.gemm_flops - op.flops);
    else if (op.op == KernelClass::kDecodeAttention)
      rest.attention_flops = std::max(0.0, rest.attention_flops - op.flops);
    else
      rest.prefill_attention_flops = std::max(0.0, rest.prefill_attention_flops - op.flops);
    rest.bytes = std::max(0.0, rest.bytes - op.bytes);
    rest.kernels = std::max(0, rest.kernels - op.kernels);
  }
  ChipTime t = roofline(rest);
  t.table_compute_s = table_compute, t.table_memory_s = table_memory;
  t.tabled = tabled, t.fell_back = fell_back;
  return t;
}

ChipTime ChipModel::roofline(const ChipWork& w) const {
  ChipTime t;
  if (w.gemm_flops > 0) {
    const double rows = std::max(w.rows, 1.0);
    const double shape = c_.gemm_half_rows > 0 ? rows / (rows + c_.gemm_half_rows) : 1.0;
    t.compute_s += w.gemm_flops / (peak(w.gemm_dtype) * c_.compute_efficiency * shape);
  }
  if (w.attention_flops > 0)
    t.compute_s +=
        w.attention_flops / (peak(w.attention_dtype) *
                             (w.decode ? c_.decode_attention_efficiency : c_.prefill_attention_efficiency));
  if (w.prefill_attention_flops > 0)
    t.compute_s += w.prefill_attention_flops / (peak(w.attention_dtype) * c_.prefill_attention_efficiency);
  t.memory_s = w.bytes / (c_.hbm_bandwidth * c_.hbm_efficiency);
  t.fixed_s = w.kernels * c_.kernel_overhead;
  return t;
}

double ChipModel::overlapped_seconds(double compute_s, double comm_s) const {
  return std::max(comm_s, compute_s + c_.comm_share * comm_s);
}

}  // namespace ultrasim
