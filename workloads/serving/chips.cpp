// The chip profiles: one table, each value with its source. NVIDIA's efficiencies are fitted on kernel
// tables (results/validation/chips/, `ultrasim calibrate-chip`); Trainium's fixed costs, which no kernel
// table gives, on the fewest end-to-end figures (named below, counted as fitted in results/validation/).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/suggest.hpp"
#include "workloads/serving/serving.hpp"
#include "workloads/workload_file.hpp"

namespace ultrasim {
namespace {

using Values = std::vector<ChipValue>;

Values join(Values a, const Values& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The serving engine's host time per request per step (vLLM's: it builds the batch, samples and processes
// outputs request by request), fitted on two vLLM runs (results/validation/serving, --fit-host); the host
// and the chips take turns (vLLM's synchronous scheduler; an overlap scheduler: --set host_overlap=1).
const std::string kHostFit =
    "fitted: ML.ENERGY leaderboard v3, vLLM Llama-3.1-8B on one H100 at 64 and 255 in flight: median ITL "
    "11.5 and 26.1 ms (results/validation/serving)";
const Values kVllmHost{
    {"request_overhead", "44.8us", kHostFit},
    {"host_overlap", "0", "vLLM's default scheduler: the host's work and the chips' take turns (assumption)"},
};

// Training's kernels (Transformer Engine's GEMMs, FlashAttention's backward) against those the efficiencies
// below were fitted on, fitted on one published run that is all compute (results/validation/training).
const std::string kTrainFit =
    "fitted: NeMo 24.07 Llama-2-7B on 8 H100, FP8, dp 8: 16,847 tokens/s per GPU "
    "(results/validation/training)";

// Hopper's kernels (H100, H200 and H800 share the SM and its clocks).
const std::string kFit =
    "fitted: results/validation/chips/hopper_kernels.csv (DeepGEMM, FlashMLA, FlashAttention-3; every 3rd "
    "point held out)";
const Values kHopperKernels{
    {"bf16_flops_ratio", "0.5", "NVIDIA H100 datasheet: 989 BF16 / 1,979 FP8 dense TFLOP/s"},
    {"fp4_flops_ratio", "0", "Hopper has no FP4 tensor cores"},
    {"compute_efficiency", "0.6521", kFit},
    {"gemm_half_rows", "101.9", kFit},
    {"hbm_efficiency", "0.945", kFit},
    {"kernel_overhead", "4.436us", kFit},
    {"prefill_attention_efficiency", "0.7503", kFit},
    {"decode_attention_efficiency", "0.667",
     "FlashMLA README: 660 TFLOP/s compute-bound MLA decode of 989 BF16 on H800"},
    {"layer_overhead", "0s", "assumption: CUDA graphs; the kernels' own fixed costs are counted"},
    {"step_overhead", "1ms", "assumption: host scheduling and sampling per step (no published figure)"},
    {"comm_share", "0.152", "DeepSeek-V3 report (arXiv 2412.19437) 3.5.1: 20 of 132 SMs run the all-to-all"},
    {"training_efficiency", "0.7465", kTrainFit},
    {"kernel_tables", "hopper",
     "sim/machine/tables/hopper.csv: H800 kernel times by shape (alibaba/InferSim bench_data: FlashInfer "
     "MLA and GQA decode, FlashAttention-3 prefill, DeepGEMM FP8 GEMMs; DeepGEMM README)"},
};

// Power (results/validation/power/): the shares of chip_power a Hopper draws while HBM-bound and while
// waiting, fitted on one ML.ENERGY series; the host is an MLPerf node's idle wall power less its GPUs' idle
// power and the hgx-h100 fabric's 4 switches at switch_power; the facility is AWS's (one PUE for every chip).
const std::string kHopperPowerFit =
    "fitted: ML.ENERGY leaderboard v3, H100 Llama-3.1-70B bf16 tp 4, 12 runs (results/validation/power)";
const std::string kPue =
    "AWS sustainability report: 2025 global PUE 1.14 (assumption for non-AWS chips: the same facility)";
const Values kHopperPower{
    {"hbm_power_share", "0.54", kHopperPowerFit},
    {"wait_power_share", "0.83", kHopperPowerFit},
    {"host_power", "1500",
     "derived: MLPerf v4.1 NVIDIA H200 MaxQ node idle 2,430-2,568 W (pre-run samples) - 8 x 75 W idle GPUs - "
     "4 "
     "switches x 100 W"},
    {"host_chips", "8", "NVIDIA: 8 GPUs per HGX host"},
    {"power_cap", "0", "none (MLPerf MaxQ runs cap at 450-500 W: --set power_cap=500)"},
    {"pue", "1.14", kPue},
};

// Blackwell: no kernel table at hand; Hopper's fitted efficiencies (assumption) except prefill attention.
const std::string kFromHopper = "assumption: Hopper's fitted value (no Blackwell kernel table)";
const Values kBlackwellKernels{
    {"bf16_flops_ratio", "0.5", "NVIDIA B200: 2,250 BF16 / 4,500 FP8 dense TFLOP/s"},
    {"fp4_flops_ratio", "2", "NVIDIA B200: 9,000 FP4 / 4,500 FP8 dense TFLOP/s (NVFP4, MXFP4)"},
    {"compute_efficiency", "0.6521", kFromHopper},
    {"gemm_half_rows", "101.9", kFromHopper},
    {"hbm_efficiency", "0.945", kFromHopper},
    {"kernel_overhead", "4.436us", kFromHopper},
    {"prefill_attention_efficiency", "0.649",
     "FlashMLA README: 1,460 TFLOP/s MHA prefill forward on B200 of 2,250"},
    {"decode_attention_efficiency", "0.667", kFromHopper},
    {"layer_overhead", "0s", "assumption: CUDA graphs; the kernels' own fixed costs are counted"},
    {"step_overhead", "1ms", "assumption: as Hopper's"},
    {"comm_share", "0.152", "assumption: as Hopper's (DeepSeek-V3 report: 20 of 132 SMs)"},
    {"training_efficiency", "0.7465", "assumption: Hopper's fitted value (" + kTrainFit + ")"},
};

const std::string kBlackwellPowerFit =
    "fitted: ML.ENERGY leaderboard v3, B200 Llama-3.1-70B bf16 tp 2, 9 runs (results/validation/power)";
const Values kBlackwellPower{
    {"hbm_power_share", "0.78", kBlackwellPowerFit},
    {"wait_power_share", "0.98", kBlackwellPowerFit},
    {"power_cap", "0", "none"},
    {"pue", "1.14", kPue},
};

// Trainium: no kernel table is published. The GEMM efficiency and the fixed cost per layer (the
// compiler runs a layer as one program) are fitted on one end-to-end run, two figures: trn2 Llama-3.3-70B
// bf16 at batch 1, 10,000 in / 1,500 out, tp 16 (AWS Neuron NxDI tutorial): ITL p50 19.83 ms, TTFT p50
// 576 ms (scripts/serving_validation.py --fit-trainium). trn3 takes trn2's (same software stack).
const std::string kTrnFit =
    "fitted: AWS Neuron trn2 Llama-3.3-70B tutorial, batch 1: ITL 19.83 ms, TTFT 576 ms "
    "(results/validation/serving)";
const Values kTrainiumKernels{
    {"compute_efficiency", "0.3238", kTrnFit},
    {"gemm_half_rows", "64",
     "assumption: half a pass of the 128-row PE array (no Trainium GEMM table; Hopper's fit says 101.9)"},
    {"hbm_efficiency", "0.945", "assumption: Hopper's fitted value (NKI DMA guide: DMA peak ~ HBM peak)"},
    {"kernel_overhead", "1.3us", "NKI DMA guide: ~1,300 ns setup per DMA transfer"},
    {"prefill_attention_efficiency", "0.3238", "assumption: as the fitted GEMM efficiency"},
    {"decode_attention_efficiency", "0.3238", "assumption: as the fitted GEMM efficiency"},
    {"layer_overhead", "165us", kTrnFit},
    {"step_overhead", "437us", "vllm-neuron async_execution.md: 437 us per synchronous model call"},
    {"comm_share", "0.1",
     "assumption: collectives run on their own cores and DMA engines, which share the HBM (10 %)"},
    {"training_efficiency", "0.7465",
     "assumption: Hopper's fitted value (no Trainium training figure with "
     "its configuration is published)"},
    {"idle_power_share", "0.1", "assumption: Hopper's (no Trainium power figure is published)"},
    {"hbm_power_share", "0.54", "assumption: Hopper's fitted value"},
    {"wait_power_share", "0.83", "assumption: Hopper's fitted value"},
    {"host_power", "1500", "assumption: an HGX host's (derived from MLPerf, Hopper)"},
    {"host_chips", "16", "AWS: 16 Trainium chips per trn2.48xlarge host"},
    {"power_cap", "0", "none"},
    {"pue", "1.14", "AWS sustainability report: 2025 global PUE 1.14"},
};

// AWS Trainium, by generation.
std::vector<ChipProfile> trainium_chips() {
  return {
      {"trn3",
       "AWS Trainium3",
       {"trn3"},
       join({{"chip_flops", "2.517e15", "AWS Neuron docs (trn3-arch): 2,517 TFLOP/s dense MXFP8"},
             {"bf16_flops_ratio", "0.2666", "AWS Neuron docs: 671 BF16 / 2,517 MXFP8 TFLOP/s"},
             {"fp4_flops_ratio", "1", "AWS Neuron docs: 2,517 TFLOP/s MXFP8/MXFP4"},
             {"hbm_bandwidth", "4.9TBps", "AWS Neuron docs: HBM3e 4.9 TB/s"},
             {"hbm_capacity", "144GiB", "AWS Neuron docs: 144 GiB HBM3e"},
             {"chip_power", "1000", "3P: ~1 kW reported, no AWS figure"},
             {"ultraserver_price_per_hour", "360",
              "assumption: no public Trn3 price (2.50 USD per chip-hour)"},
             {"ultraserver_chips", "144", "AWS: 144 chips per Gen2 UltraServer"}},
            join(kTrainiumKernels, kVllmHost)),
       "",
       {}},
      {"trn2",
       "AWS Trainium2",
       {"trn2"},
       join({{"chip_flops", "1.299e15", "AWS Neuron docs (trn2-arch): 1,299 TFLOP/s dense FP8"},
             {"bf16_flops_ratio", "0.5135", "AWS Neuron docs: 667 BF16 / 1,299 FP8 TFLOP/s"},
             {"fp4_flops_ratio", "0", "AWS Neuron docs: Trainium2 has no MXFP4"},
             {"hbm_bandwidth", "2.9TBps", "AWS Neuron docs: 2.9 TB/s"},
             {"hbm_capacity", "96GiB", "AWS Neuron docs: 96 GiB"},
             {"chip_power", "500", "3P estimate: ~500 W, no AWS figure"},
             {"ultraserver_price_per_hour", "143.04",
              "3P report of AWS Capacity Blocks: 35.76 USD per trn2.48xlarge-hour = 2.235 USD per chip-hour, "
              "x 64"},
             {"ultraserver_chips", "64", "AWS: 64 chips per Trn2 UltraServer"}},
            join(kTrainiumKernels, kVllmHost)),
       "",
       {}},
  };
}

// NVIDIA's GPUs: Blackwell, then Hopper.
std::vector<ChipProfile> nvidia_chips() {
  return {
      {"gb200",
       "NVIDIA Blackwell GPU of a GB200 NVL72",
       {"nvl72"},
       join({{"chip_flops", "5.0e15", "derived: NVIDIA NVL72 720 PF sparse FP8 / 72 GPUs / 2"},
             {"hbm_bandwidth", "8TBps", "derived: NVIDIA NVL72 576 TB/s / 72"},
             {"hbm_capacity", "186GB", "NVIDIA NVL72 13.4 TB / 72; MLPerf system GB200-186GB"},
             {"chip_power", "1200", "3P: ~1.2 kW per GPU"},
             {"idle_power_share", "0.117", "assumption: B200's idle 140 W (nvidia-smi snapshots) of 1,200 W"},
             {"host_power", "1700",
              "derived: ~6.5 kW per NVL72 compute tray (Supermicro, via introl.com) - 4 GPUs x 1.2 kW"},
             {"host_chips", "4", "NVIDIA: 4 GPUs per GB200 compute tray"},
             {"ultraserver_price_per_hour", "756",
              "3P listing: CoreWeave 42 USD per 4-GPU node-hour = 10.50 USD per GPU-hour, x 72"},
             {"ultraserver_chips", "72", "NVIDIA: 72 GPUs per NVL72"}},
            join(join(kBlackwellKernels, kBlackwellPower), kVllmHost)),
       "",
       {}},
      {"b200",
       "NVIDIA B200 (HGX, 1000 W)",
       {},
       join({{"chip_flops", "4.5e15", "NVIDIA HGX B200: 4,500 TFLOP/s dense FP8"},
             {"hbm_bandwidth", "8TBps", "NVIDIA HGX B200: 8 TB/s"},
             {"hbm_capacity", "180GB", "NVIDIA HGX B200: 180 GB usable"},
             {"chip_power", "1000", "NVIDIA HGX B200: 1,000 W per GPU"},
             {"idle_power_share", "0.14", "nvidia-smi snapshots of idle 8x B200 hosts: 136-142 W of 1,000 W"},
             {"host_power", "1390",
              "derived: MLPerf v5.1 Lenovo SR680a V3 (8x B200, air) idle 2,906-2,917 W - 8 x 140 W - 4 x 100 "
              "W"},
             {"host_chips", "8", "NVIDIA: 8 GPUs per HGX host"},
             {"ultraserver_price_per_hour", "64", "assumption: 8 USD per GPU-hour, x 8"},
             {"ultraserver_chips", "8", "NVIDIA: 8 GPUs per HGX board"}},
            join(join(kBlackwellKernels, kBlackwellPower), kVllmHost)),
       "",
       {}},
      {"h100",
       "NVIDIA H100 SXM",
       {"hgx-h100"},
       join({{"chip_flops", "1.979e15", "NVIDIA H100 datasheet: 1,979 TFLOP/s dense FP8"},
             {"hbm_bandwidth", "3.35TBps", "NVIDIA H100 datasheet: 3.35 TB/s"},
             {"hbm_capacity", "80GB", "NVIDIA H100 datasheet: 80 GB"},
             {"chip_power", "700", "NVIDIA H100 datasheet: up to 700 W"},
             {"idle_power_share", "0.1", "nvidia-smi snapshots of idle H100 SXM: 68-73 W of 700 W"},
             {"ultraserver_price_per_hour", "32", "assumption: 4 USD per GPU-hour, x 8"},
             {"ultraserver_chips", "8", "NVIDIA: 8 GPUs per HGX board"}},
            join(join(kHopperKernels, kHopperPower), kVllmHost)),
       "",
       {}},
      {"h200",
       "NVIDIA H200 SXM",
       {},
       join({{"chip_flops", "1.979e15", "NVIDIA H200 datasheet: 1,979 TFLOP/s dense FP8 (H100's SM)"},
             {"hbm_bandwidth", "4.8TBps", "NVIDIA H200 datasheet: 4.8 TB/s"},
             {"hbm_capacity", "141GB", "NVIDIA H200 datasheet: 141 GB"},
             {"chip_power", "700", "NVIDIA H200 datasheet: up to 700 W"},
             {"idle_power_share", "0.107", "nvidia-smi snapshots of idle H200 SXM: 73-76 W of 700 W"},
             {"ultraserver_price_per_hour", "40", "assumption: 5 USD per GPU-hour, x 8"},
             {"ultraserver_chips", "8", "NVIDIA: 8 GPUs per HGX board"}},
            join(join(kHopperKernels, kHopperPower), kVllmHost)),
       "",
       {}},
      {"h800",
       "NVIDIA H800 SXM (H100 with NVLink cut to ~160 GB/s: give the topology's nvlink rate)",
       {},
       join({{"chip_flops", "1.979e15", "assumption: H100's SM (DeepGEMM reaches 1,550 TFLOP/s FP8 on H800)"},
             {"hbm_bandwidth", "3.35TBps", "assumption: H100's HBM3 (no H800 datasheet text found)"},
             {"hbm_capacity", "80GB", "assumption: H100's"},
             {"chip_power", "700", "assumption: H100's"},
             {"idle_power_share", "0.1", "assumption: H100's"},
             {"ultraserver_price_per_hour", "32", "assumption: 4 USD per GPU-hour, x 8"},
             {"ultraserver_chips", "8", "NVIDIA: 8 GPUs per HGX board"}},
            join(join(kHopperKernels, kHopperPower), kVllmHost)),
       "",
       {}},
  };
}

}  // namespace

const std::vector<ChipProfile>& serving_chips() {
  static const std::vector<ChipProfile> kChips = [] {
    std::vector<ChipProfile> all = trainium_chips();
    for (auto& chip : nvidia_chips()) all.push_back(std::move(chip));
    return all;
  }();
  return kChips;
}

ChipProfile chip_profile(const std::string& name, const std::string& topology) {
  if (name.ends_with(".json")) return read_chip_profile(name);
  if (name != "auto") return find_by_name(serving_chips(), name, "chip");
  // The scale-up preset: the topology's own name, or PRESET of cluster:K:PRESET.
  std::string base = topology.substr(0, topology.find('@'));
  if (base.rfind("cluster:", 0) == 0) {
    const auto second = base.find(':', 8);
    base = second == std::string::npos ? "" : base.substr(second + 1);
  }
  base = base.substr(0, base.find(':'));
  for (const auto& chip : serving_chips())
    for (const auto& prefix : chip.topologies)
      if (base.rfind(prefix, 0) == 0) return chip;
  return serving_chips().front();  // generators (switch:N, ...): Trainium3's chip, as chip_params()
}

const ParamTable<ServingChipParams>& serving_chip_table() {
  static const ParamTable<ServingChipParams> table =
      ParamTable<ServingChipParams>{}
          .add({"hbm_capacity", "144GiB", Unit::kBytes, "a chip's HBM capacity",
                "AWS Neuron docs: Trainium3 144 GiB (the chip profile sets it per system)"},
               &ServingChipParams::hbm_capacity)
          .nest(chip_table(), &ServingChipParams::chip);
  return table;
}

std::vector<ParamSpec> serving_params() {
  return serving_chip_table().specs();
}

ChipProfile read_chip_profile(const std::string& path) {
  const std::string where = "chip profile '" + path + "'";
  const nlohmann::json j =
      parse_json_text(read_input_file(path, "chip profile '" + path + "'", "a JSON chip profile"), where);
  if (!j.is_object()) throw InputError(where + ": expected a JSON object with 'values'");
  check_known_fields(j, {"name", "description", "values", "sources", "tables"}, where);
  ChipProfile out;
  out.file = path;
  out.name = j.value("name", path);
  out.description = j.value("description", std::string("a chip profile read from ") + path);
  if (!j.contains("values") || !j["values"].is_object())
    throw InputError(where + ": missing field 'values' (an object of the chip's parameters)");
  const nlohmann::json& values = j["values"];
  const nlohmann::json sources = j.value("sources", nlohmann::json::object());
  ParamSet check(serving_params());
  std::vector<std::string> known;
  for (const ParamSpec& spec : check.specs()) known.push_back(spec.name);
  for (const auto& [key, v] : values.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw InputError(where + ": " + unknown_name_message("field 'values'", key, known));
  // Added after the first profiles were written: a profile without them takes the default.
  const std::vector<std::string> optional{
      "kernel_tables",      "gemm_floor", "attention_floor", "idle_power_share", "hbm_power_share",
      "wait_power_share",   "power_cap",  "host_power",      "host_chips",       "pue",
      "training_efficiency"};
  for (const ParamSpec& spec : check.specs()) {
    if (!values.contains(spec.name) &&
        std::find(optional.begin(), optional.end(), spec.name) != optional.end())
      continue;
    if (!values.contains(spec.name))
      throw InputError(where + ": missing field 'values." + spec.name + "' (" + spec.meaning + ")");
    const nlohmann::json& v = values[spec.name];
    std::string text;
    if (v.is_number()) {
      const double x = v.get<double>();
      if (!std::isfinite(x)) throw InputError(where + ": field 'values." + spec.name + "' must be finite");
      text = v.dump();
    } else if (v.is_string()) {
      text = v.get<std::string>();
    } else {
      throw InputError(where + ": field 'values." + spec.name +
                       "' must be a number or a string with its unit");
    }
    with_context(where + ", field 'values." + spec.name + "'", [&] { check.apply({{spec.name, text}}); });
    const std::string source = sources.contains(spec.name) && sources[spec.name].is_string()
                                   ? sources[spec.name].get<std::string>()
                                   : "profile file " + path;
    out.values.push_back({spec.name, text, source});
  }
  // The profile's own tables: registered under a key of this file, which kernel_tables then names.
  const bool inline_tables = values.contains("kernel_tables") && values["kernel_tables"] == "inline";
  if (j.contains("tables") != inline_tables)
    throw InputError(where + ": field 'tables' goes with values.kernel_tables \"inline\" (and only with it)");
  if (inline_tables) {
    if (!j["tables"].is_array()) throw InputError(where + ": field 'tables' must be an array of kernel rows");
    for (std::size_t i = 0; i < j["tables"].size(); ++i) {
      const nlohmann::json& row = j["tables"][i];
      const std::string at = where + ", tables entry " + std::to_string(i);
      if (!row.is_object()) throw InputError(at + ": expected an object");
      std::map<std::string, std::string> fields;
      for (const auto& [k, v] : row.items()) fields[k] = v.is_string() ? v.get<std::string>() : v.dump();
      out.tables.push_back(kernel_row(fields, at));
    }
    char key[40];
    std::snprintf(key, sizeof key, "inline:%016zx", std::hash<std::string>{}(path));
    register_kernel_tables(key, out.tables);
    for (ChipValue& v : out.values)
      if (v.name == "kernel_tables") v.value = key;
  }
  return out;
}

nlohmann::ordered_json chip_profile_json(const ChipProfile& profile) {
  // Every parameter: the profile's, else the default with its source (a file must give them all).
  nlohmann::ordered_json values = nlohmann::ordered_json::object(),
                         sources = nlohmann::ordered_json::object();
  for (const ParamSpec& spec : serving_params()) {
    values[spec.name] = spec.default_value, sources[spec.name] = spec.source;
    for (const ChipValue& v : profile.values)
      if (v.name == spec.name) values[v.name] = v.value, sources[v.name] = v.source;
  }
  nlohmann::ordered_json out{
      {"name", profile.name}, {"description", profile.description}, {"values", values}, {"sources", sources}};
  if (!profile.tables.empty()) {
    values["kernel_tables"] = "inline";
    out["values"] = values;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const KernelRow& r : profile.tables) {
      nlohmann::ordered_json row = nlohmann::ordered_json::object();
      for (const auto& [k, v] : r.fields) {  // numbers as numbers
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        if (k != "source" && !v.empty() && end == v.c_str() + v.size() && std::isfinite(x))
          row[k] = x;
        else
          row[k] = v;
      }
      rows.push_back(row);
    }
    out["tables"] = rows;
  }
  return out;
}

}  // namespace ultrasim
