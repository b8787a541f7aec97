#include "workloads/serving/serving_report.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

#include "sim/analysis/link_stats.hpp"
#include "sim/analysis/trace.hpp"
#include "topology/base/units.hpp"
#include "workloads/workload_metrics.hpp"

namespace ultrasim {
namespace {

nlohmann::ordered_json seconds_json(const std::map<std::string, double>& m) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [k, v] : m) out[k] = v;
  return out;
}

std::string main_bound(const std::map<std::string, double>& m) {
  std::string best;
  double most = -1;
  for (const auto& [k, v] : m)
    if (v > most) most = v, best = k;
  return best;
}

// The decode step's fields: throughput, utilisation, energy and cost per token, what bounds it.
void decode_fields(nlohmann::ordered_json& p, SegmentPricer& pricer, std::uint64_t B,
                   const BatchSteps& steps) {
  const ServingLayout& layout = pricer.layout();
  const ParamSet& params = pricer.params();
  const int chips = layout.chips, pp = layout.pp;
  const int switches = static_cast<int>(pricer.full().topology->switches().size());
  const ChipParams chip = chip_of(params);
  const StepTime& decode0 = *steps.decode0;
  const double step = percentile(steps.tpot, 0.5);
  const double tokens_per_s = step > 0 ? pp * static_cast<double>(B) / step : 0;
  const double tokens = pp * static_cast<double>(B) * pricer.config().tokens_per_step();  // per decode step
  // Energy per generated token: a decode step's over its tokens, plus (where the run has prefill) the
  // batch's prefill over the batch's output tokens (pp batches share a step's energy, as its tokens).
  const double watts = chip_power_w(chip, decode0.bound_s);
  const Energy decode =
      workload_energy(params, chips, switches, decode0.seconds, watts, decode0.link_bytes * pp);
  Energy prefill;
  if (steps.prefill0 && steps.output_tokens > 0)
    prefill = workload_energy(params, chips, switches, steps.prefill0->seconds,
                              chip_power_w(chip, steps.prefill0->bound_s), steps.prefill0->link_bytes * pp);
  const double prefill_tokens = pp * std::max(steps.output_tokens, 1.0);
  p["tokens_per_s"] = tokens_per_s;
  p["tokens_per_s_per_chip"] = tokens_per_s / chips;
  p["mfu"] = decode0.flops / (decode0.seconds * chips * chip.chip_flops);
  p["hbm_utilisation"] = decode0.bytes / (decode0.seconds * chips * chip.hbm_bandwidth);
  p["attention_balance"] = decode0.attention_balance;
  p["chip_power_w"] = watts;
  p["energy_per_token_j"] = decode.node() / tokens + prefill.node() / prefill_tokens;
  p["energy_per_token_chips_j"] = decode.chips / tokens + prefill.chips / prefill_tokens;
  p["energy_per_token_facility_j"] = decode.facility() / tokens + prefill.facility() / prefill_tokens;
  p["decode_energy_per_token_j"] = decode.node() / tokens;
  p["cost_per_mtok_usd"] = workload_cost_usd(params, chips, decode0.seconds) / tokens * 1e6;
  p["bound"] = main_bound(decode0.bound_s);
  p["bound_s"] = seconds_json(decode0.bound_s);
  p["parts_s"] = seconds_json(decode0.parts_s);
}

// The prefill step's fields.
void prefill_fields(nlohmann::ordered_json& p, SegmentPricer& pricer, const BatchSteps& steps) {
  const int chips = pricer.layout().chips, pp = pricer.layout().pp;
  const StepTime& prefill0 = *steps.prefill0;
  const double step = percentile(steps.ttft, 0.5);
  p["prefill_tokens_per_s"] = step > 0 ? pp * steps.input_tokens / step : 0;
  p["prefill_mfu"] = prefill0.flops / (prefill0.seconds * chips * chip_of(pricer.params()).chip_flops);
  p["prefill_chip_power_w"] = chip_power_w(chip_of(pricer.params()), prefill0.bound_s);
  p["prefill_attention_balance"] = prefill0.attention_balance;
  p["prefill_bound"] = main_bound(prefill0.bound_s);
  p["prefill_bound_s"] = seconds_json(prefill0.bound_s);
  p["prefill_parts_s"] = seconds_json(prefill0.parts_s);
}

}  // namespace

nlohmann::ordered_json point_json(SegmentPricer& pricer, std::uint64_t B, const BatchSteps& steps,
                                  const MemoryUse& use) {
  const auto& [ttft, tpot, prefill0, decode0, input_tokens, output_tokens] = steps;
  nlohmann::ordered_json p;
  p["batch"] = B;
  auto stats = [&](const std::string& name, const std::vector<double>& v) {
    p[name + "_s"] = v.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(v.front());
    p[name + "_p50_s"] = v.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(percentile(v, 0.5));
    p[name + "_p99_s"] = v.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(percentile(v, 0.99));
  };
  stats("ttft", ttft);
  stats("tpot", tpot);
  if (decode0) decode_fields(p, pricer, B, steps);
  if (prefill0) prefill_fields(p, pricer, steps);
  if (prefill0 && decode0 && output_tokens > 0) {
    const double life =
        percentile(ttft, 0.5) + output_tokens / static_cast<double>(B) * percentile(tpot, 0.5);
    p["request_tokens_per_s"] = pricer.layout().pp * output_tokens / life;
  }
  if (const auto& t = decode0 ? decode0 : prefill0) {
    // Which kernel classes the chip's tables priced, and which fell back to its roofline (outside them).
    unsigned tabled = t->tabled, fell_back = t->fell_back;
    if (prefill0 && decode0) tabled |= prefill0->tabled, fell_back |= prefill0->fell_back;
    p["kernels_tabled"] = kernel_class_names(tabled);
    p["kernels_fell_back"] = kernel_class_names(fell_back);
    p["moe_layer_s"] = t->moe_s;
    p["tp_allreduce"] =
        t->tp_count == 0
            ? nlohmann::ordered_json()
            : nlohmann::ordered_json{{"bytes", t->tp_bytes}, {"time_s", t->tp_s}, {"count", t->tp_count}};
  }
  p["weights_bytes_per_chip"] = use.weights;
  p["kv_bytes_per_chip"] = use.kv;
  p["hbm_capacity_bytes"] = use.capacity;
  return p;
}

nlohmann::ordered_json frontier_json(const std::vector<double>& targets,
                                     const nlohmann::ordered_json& points) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const double target : targets) {
    nlohmann::ordered_json best;
    for (const auto& p : points) {
      if (p.contains("error") || !p.contains("tokens_per_s_per_chip") ||
          p["tpot_p99_s"].get<double>() > target)
        continue;
      if (best.is_null() ||
          p["tokens_per_s_per_chip"].get<double>() > best["tokens_per_s_per_chip"].get<double>())
        best = p;
    }
    nlohmann::ordered_json row;
    row["tpot_target_s"] = target;
    row["batch"] = best.is_null() ? nlohmann::ordered_json() : best["batch"];
    for (const char* k :
         {"tokens_per_s_per_chip", "tpot_p99_s", "cost_per_mtok_usd", "energy_per_token_j", "bound"})
      row[k] = best.is_null() ? nlohmann::ordered_json() : best[k];
    out.push_back(row);
  }
  return out;
}

void serving_config_json(nlohmann::ordered_json& out, const ServingConfig& config, SegmentPricer& pricer) {
  using json = nlohmann::ordered_json;
  const ServingLayout& layout = pricer.layout();
  out["model"] = model_json(config.model);
  out["chip"] = pricer.profile().name;
  out["chip_file"] = pricer.profile().file.empty() ? json() : json(pricer.profile().file);
  out["layout"] = {{"tp", layout.tp}, {"pp", layout.pp}, {"dp", layout.dp}, {"ep", layout.ep}};
  out["placement"] = config.placement;
  const int S = layout.stage_chips();  // the replicas in effect: balanced fills the free slots by default
  out["replicate_hot"] =
      config.model.moe() ? moe_layer_config(config, std::vector<std::uint64_t>(S, 1), 0, 0).hot_replicated(S)
                         : 0;
  out["replicas"] = config.replicas;
  out["micro_batches"] = config.micro_batches;
  out["phase"] = config.phase;
  const bool fixed = config.lengths.empty(), zipf = config.expert_load.empty();
  out["input_len"] = fixed ? json(config.input_len) : json();
  out["output_len"] = fixed ? json(config.output_len) : json();
  out["lengths"] = fixed ? json() : json(config.lengths_source);
  out["length_dist"] = fixed ? json(config.length_dist) : json();
  out["router"] = config.router;
  out["zipf"] = zipf ? json(config.zipf.value_or(config.model.expert_zipf)) : json();
  out["expert_load"] = zipf ? json() : json(config.expert_load_source);
  out["max_nodes_per_token"] = config.max_nodes > 0 ? json(config.max_nodes) : json();
  out["node_chips"] = config.max_nodes > 0 ? json(config.node_chips) : json();
  out["draft_tokens"] = config.draft_tokens;
  out["draft_layers"] = config.draft_tokens > 0 ? json(config.draft_layers) : json();
  out["acceptance"] = config.draft_tokens > 0 ? json(config.acceptance) : json();
  out["tokens_per_step"] = config.tokens_per_step();
  out["batches"] = config.batches;
  out["seed"] = config.seed;
  out["allreduce"] = config.allreduce;
}

void write_serving_trace(OutputFile& file, SegmentPricer& pricer, const nlohmann::ordered_json& result) {
  std::unique_ptr<SimResult> run = pricer.take_trace();
  if (!run) throw InputError("--trace: the first batch size has no step to trace");
  std::sort(run->transfer_records.begin(), run->transfer_records.end(), [](const auto& a, const auto& b) {
    return std::tie(a.start, a.src, a.dst) < std::tie(b.start, b.src, b.dst);
  });
  run->engine = pricer.engine_used();
  Machine& full = pricer.full();
  const RecordPaths paths(*full.routes, full.faults);
  const LinkStats links =
      compute_link_stats(*full.topology, paths, full.faults, run->transfer_records, run->time_s);
  write_chrome_trace(file, *full.topology, *run, &links, nlohmann::json::parse(json_text(result)),
                     TraceOptions{});
  file.close();
}

std::string serving_table(const nlohmann::ordered_json& r) {
  std::ostringstream out;
  const auto& l = r["layout"];
  const bool moe = r["model"]["experts"].get<int>() > 0;
  out << "# Serving " << r["model"]["name"].get<std::string>() << " on " << r["topology"].get<std::string>()
      << " (" << r["chips"] << " chips of " << r["chip"].get<std::string>() << "): tp " << l["tp"] << ", pp "
      << l["pp"] << ", dp " << l["dp"];
  if (moe)
    out << ", ep " << l["ep"] << ", " << r["placement"].get<std::string>() << " placement, "
        << r["router"].get<std::string>() << " router";
  out << ", " << r["batches"] << " batch" << (r["batches"].get<int>() == 1 ? "" : "es") << " each\n";
  auto ms = [](const nlohmann::ordered_json& v) {
    return v.is_null() ? std::string("-") : fixed_text(v.get<double>() * 1e3, 3);
  };
  auto num = [](const nlohmann::ordered_json& v, int d) {
    return v.is_null() ? std::string("-") : fixed_text(v.get<double>(), d);
  };
  out << "batch  TTFT p50 ms  TTFT p99 ms  TPOT p50 ms  TPOT p99 ms  tok/s/chip    MFU  HBM util  J/token  "
         "USD/Mtok  bound\n";
  for (const auto& p : r["points"]) {
    std::string row = std::to_string(p["batch"].get<std::uint64_t>());
    row.resize(7, ' ');
    if (p.contains("error")) {
      out << row << p["error"].get<std::string>() << "\n";
      continue;
    }
    auto col = [&](const std::string& text, std::size_t width) {
      row += std::string(width > text.size() ? width - text.size() : 0, ' ') + text + "  ";
    };
    auto get = [&](const char* k) { return p.contains(k) ? p[k] : nlohmann::ordered_json(); };
    col(ms(get("ttft_p50_s")), 11);
    col(ms(get("ttft_p99_s")), 11);
    col(ms(get("tpot_p50_s")), 11);
    col(ms(get("tpot_p99_s")), 11);
    col(num(get("tokens_per_s_per_chip"), 1), 10);
    col(num(get("mfu"), 3), 5);
    col(num(get("hbm_utilisation"), 3), 8);
    col(num(get("energy_per_token_j"), 4), 7);
    col(num(get("cost_per_mtok_usd"), 3), 8);
    row += p.contains("bound") ? p["bound"].get<std::string>() : p.value("prefill_bound", std::string("-"));
    out << row << "\n";
  }
  for (const auto& f : r["frontier"])
    out << "p99 TPOT <= " << fixed_text(f["tpot_target_s"].get<double>() * 1e3, 3) << " ms: "
        << (f["batch"].is_null()
                ? std::string("no batch size meets it")
                : "batch " + std::to_string(f["batch"].get<std::uint64_t>()) + ", " +
                      fixed_text(f["tokens_per_s_per_chip"].get<double>(), 1) + " tokens/s per chip, " +
                      fixed_text(f["cost_per_mtok_usd"].get<double>(), 3) + " USD per million tokens")
        << "\n";
  out << "verified " << (r["verified"].get<bool>() ? "yes" : "NO") << "\n";
  return out.str();
}

}  // namespace ultrasim
