#include "workloads/serving/serving_run.hpp"

#include <algorithm>
#include <memory>

#include "sim/analysis/report.hpp"
#include "sim/engines/engines.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/progress.hpp"
#include "workloads/serving/capacity_run.hpp"
#include "workloads/serving/production_run.hpp"
#include "workloads/serving/segment_pricer.hpp"
#include "workloads/serving/serving_report.hpp"
#include "workloads/serving/step_accounting.hpp"

namespace ultrasim {
namespace {

// The plans of one step: one, or one per micro-batch.
std::vector<StepPlan> step_plans(SegmentPricer& pricer,
                                 const std::vector<std::pair<std::uint64_t, std::uint64_t>>& requests,
                                 bool decode, int batch) {
  std::vector<StepPlan> plans;
  if (pricer.config().micro_batches == 1)
    plans.push_back(plan_step(pricer.config(), pricer.layout(), requests, decode, batch));
  else
    for (int mb = 0; mb < 2; ++mb)
      plans.push_back(plan_step(pricer.config(), pricer.layout(), requests, decode, batch, mb));
  return plans;
}

// The steps of one batch size: a prefill and a decode per routed batch, or one of them (--phase).
int steps_per_batch_size(const ServingConfig& config) {
  return config.batches * (config.phase == "both" ? 2 : 1);
}

// Every routed batch's prefill and decode at batch size B, each step advancing `progress`.
BatchSteps run_batches(SegmentPricer& pricer, std::uint64_t B, StepTime& totals, bool trace,
                       Progress& progress) {
  const ServingConfig& config = pricer.config();
  BatchSteps out;
  auto& [ttft, tpot, prefill0, decode0, input_tokens, output_tokens] = out;
  for (int b = 0; b < config.batches; ++b) {
    const auto requests = draw_requests(config, B, b);
    if (b == 0)
      for (const auto& [in, out] : requests)
        input_tokens += static_cast<double>(in), output_tokens += static_cast<double>(out);
    for (const bool decode : {false, true}) {
      if ((decode && config.phase == "prefill") || (!decode && config.phase == "decode")) continue;
      // The trace: batch 0's decode step (its prefill with --phase prefill).
      if (trace && b == 0 && (decode || config.phase == "prefill")) pricer.trace_next_step();
      const StepTime t = account_step(pricer, step_plans(pricer, requests, decode, b));
      progress.advance();
      // TPOT: a decode step yields tokens_per_step tokens per request (1 without a draft).
      (decode ? tpot : ttft).push_back(decode ? t.seconds / config.tokens_per_step() : t.seconds);
      if (b == 0) (decode ? decode0 : prefill0) = t;
      totals.transfers += t.transfers;
      if (t.wrong > 0 && totals.wrong == 0) totals.first_error = t.first_error;
      totals.wrong += t.wrong;
    }
  }
  return out;
}

// One batch size: every routed batch's prefill and decode, each step advancing `progress`.
nlohmann::ordered_json serve_point(SegmentPricer& pricer, std::uint64_t B, StepTime& totals, bool trace,
                                   Progress& progress) {
  const MemoryUse use = memory_use(pricer.config(), pricer.layout(), pricer.params(), B);
  check_memory(use, B);
  return point_json(pricer, B, run_batches(pricer, B, totals, trace, progress), use);
}

// Every batch size's point; one that does not fit is an error point unless it is the only one (or all fail).
nlohmann::ordered_json serve_points(SegmentPricer& pricer, StepTime& totals, bool trace) {
  const ServingConfig& config = pricer.config();
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  std::string first_failure;
  bool any = false;
  const int steps = steps_per_batch_size(config);
  Progress progress("serve: steps", config.batch_sizes.size() * static_cast<std::size_t>(steps));
  for (const auto B : config.batch_sizes) {
    const std::size_t before = progress.done();
    try {
      points.push_back(serve_point(pricer, B, totals, trace && points.empty(), progress));
      any = true;
    } catch (const InputError& e) {
      progress.advance(before + static_cast<std::size_t>(steps) - progress.done());  // its steps not run
      if (config.batch_sizes.size() == 1) throw;
      if (first_failure.empty()) first_failure = e.what();
      points.push_back({{"batch", B}, {"error", e.what()}});
    }
  }
  if (!any) throw InputError(first_failure);
  return points;
}

}  // namespace

nlohmann::ordered_json run_serving(const ServingConfig& config, const std::string& command,
                                   const std::string& trace) {
  config.validate();
  if (!trace.empty() && config.micro_batches != 1)
    throw InputError(
        "--trace shows one step's segments in order: it cannot show --micro-batches 2's overlap");
  SegmentPricer pricer(config);
  std::unique_ptr<OutputFile> trace_file;
  if (!trace.empty()) trace_file = std::make_unique<OutputFile>(trace, "trace");
  nlohmann::ordered_json out = workload_result(command, "serving", config.topology, pricer.layout().chips);
  serving_config_json(out, pricer.config(), pricer);
  StepTime totals;
  const nlohmann::ordered_json points = serve_points(pricer, totals, trace_file != nullptr);
  if (points.size() == 1)  // one batch size: its fields at the top level too (what a sweep tabulates)
    for (const auto& [k, v] : points.front().items())
      if (k != "batch") out[k] = v;
  out["batch"] = config.batch_sizes.size() == 1 ? nlohmann::ordered_json(config.batch_sizes.front())
                                                : nlohmann::ordered_json(config.batch_sizes);
  out["points"] = points;
  out["frontier"] = frontier_json(config.tpot_targets, points);
  if (config.check_engine > 0) {  // the first batch size's first step (decode unless prefill only)
    const bool decode = config.phase != "prefill";
    const auto requests = draw_requests(config, config.batch_sizes.front(), 0);
    out["engine_check"] =
        engine_check_json(pricer.check_engine(step_plans(pricer, requests, decode, 0), config.check_engine));
  }
  SimResult summary;
  summary.transfers = totals.transfers;
  summary.engine = pricer.engine_used();
  close_workload_result(out, totals.wrong, totals.first_error, summary, pricer.params());
  if (trace_file) write_serving_trace(*trace_file, pricer, out);
  return out;
}

struct ServingStepper::Impl {
  SegmentPricer pricer;
  bool exact;
  Impl(const ServingConfig& config, bool x, std::unique_ptr<Machine> machine)
      : pricer(config, std::move(machine)), exact(x) {}
};

ServingStepper::ServingStepper(const ServingConfig& config, bool exact, int grid_layers,
                               const std::string& grid_cache, std::unique_ptr<Machine> machine)
    : impl_(std::make_unique<Impl>(config, exact, std::move(machine))) {
  if (!exact) impl_->pricer.use_predictor(std::max(grid_layers, 1), grid_cache);
}
ServingStepper::~ServingStepper() = default;
const ServingConfig& ServingStepper::config() const {
  return impl_->pricer.config();
}
const ServingLayout& ServingStepper::layout() const {
  return impl_->pricer.layout();
}
const ParamSet& ServingStepper::params() const {
  return impl_->pricer.params();
}
const ChipProfile& ServingStepper::profile() const {
  return impl_->pricer.profile();
}
int ServingStepper::switches() const {
  return static_cast<int>(impl_->pricer.full().topology->switches().size());
}
std::string ServingStepper::engine() const {
  return engine_entry(impl_->pricer.engine_used()).name;
}
std::size_t ServingStepper::grid_points() const {
  return impl_->pricer.predicted_points();
}

const Machine& ServingStepper::machine() const {
  return impl_->pricer.full();
}

ServingStepper::Step ServingStepper::step(const std::vector<StepItem>& items) {
  SegmentPricer& pricer = impl_->pricer;
  const StepTime t =
      account_step(pricer, {plan_iteration(pricer.config(), pricer.layout(), items, 0, !impl_->exact)});
  Step s;
  s.seconds = t.seconds, s.flops = t.flops, s.link_bytes = t.link_bytes;
  s.chip_watts = chip_power_w(chip_of(pricer.params()), t.bound_s);
  s.attention_balance = t.attention_balance;
  s.wrong = t.wrong, s.first_error = t.first_error;
  return s;
}

ServingStepper::Step ServingStepper::exchange(const std::vector<std::vector<std::uint64_t>>& rows) {
  const SegmentTime t = impl_->pricer.exchange(rows);
  Step s;
  s.seconds = t.seconds, s.link_bytes = t.link_bytes, s.wrong = t.wrong, s.first_error = t.first_error;
  return s;
}

WorkloadKind serving_workload() {
  return {"serving",
          "a model served on the fabric: prefill (TTFT) and decode (TPOT) steps (ultrasim serve)",
          "serve",
          {"tpot_p99_s", "tpot_p50_s", "ttft_p50_s", "ttft_p99_s", "tokens_per_s_per_chip", "mfu",
           "hbm_utilisation", "energy_per_token_j", "cost_per_mtok_usd", "bound", "verified"},
          {"table", "json"},
          [](const nlohmann::json& w, const std::string& file) {
            if (!production_config_from_json(w, file)) serving_config_from_json(w, file);
          },
          [](const nlohmann::json& w, const std::string& file, const WorkloadOutput& output) {
            if (const auto arrivals = production_config_from_json(w, file)) {  // request arrivals
              if (arrivals->capacity)
                return print_workload_result(run_capacity(*arrivals, output.command), output.format,
                                             capacity_table);
              return print_workload_result(run_production(*arrivals, output.command, output.trace),
                                           output.format, production_table);
            }
            return print_workload_result(
                run_serving(serving_config_from_json(w, file), output.command, output.trace), output.format,
                serving_table);
          },
          serving_table};
}

}  // namespace ultrasim
