// Serving workload files (`ultrasim workload FILE` with "workload": "serving", workloads/serving/), read
// through the input layer as the command reads them: what the reader accepts must deploy on 8 chips or be
// refused as input, and its steps' plans must account for every token: the decode step computes one per
// request and the prefill every prompt token, the MoE layers dispatch exactly the step's tokens, and every
// roofline is finite and non-negative, as is the memory it needs.
#include <cmath>

#include "fuzz_common.hpp"
#include "topology/base/input_files.hpp"
#include "workloads/serving/serving.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ultrasim;
  const std::string text = fuzz::text_of(data, size);
  fuzz::accepts_or_rejects([&] {
    nlohmann::json workload;
    try {
      workload = parse_json_input(text, "fuzz.json");
    } catch (const nlohmann::json::exception&) {
      return;  // not JSON: the command reports it before the reader runs
    }
    const ServingConfig config = serving_config_from_json(workload, "fuzz.json");
    if (config.model.layers > 8 || config.model.experts > 64) return;  // the same code, only longer
    const ServingLayout layout = serving_layout(config, 8);
    const ParamSet params(serving_params());
    for (const auto batch : config.batch_sizes) {
      if (batch > 64 || config.input_len > 4096) continue;
      const MemoryUse use = memory_use(config, layout, params, batch);
      fuzz::check(std::isfinite(use.weights) && use.weights >= 0 && std::isfinite(use.kv) && use.kv >= 0);
      const auto requests = draw_requests(config, batch, 0);
      fuzz::check(requests.size() == batch);
      for (const bool decode : {true, false}) {
        const StepPlan plan = plan_step(config, layout, requests, decode, 0);
        std::uint64_t tokens = 0;
        for (const auto& [in, out] : requests)
          tokens += decode ? 1 + static_cast<std::uint64_t>(config.draft_tokens) : in;
        fuzz::check(plan.tokens == tokens && plan.requests == batch);
        for (const Segment& s : plan.segments) {
          for (const ChipWork& r : s.chips)
            fuzz::check(std::isfinite(r.flops()) && r.flops() >= 0 && std::isfinite(r.bytes) && r.bytes >= 0);
          if (s.kind != Segment::kMoe) continue;
          std::uint64_t dispatched = 0;
          for (const auto n : s.moe.chip_tokens) dispatched += n;
          // A draft's layers (past the model's) run one token per request.
          const std::uint64_t expected = s.layer >= config.model.layers ? requests.size() : tokens;
          fuzz::check(dispatched == expected && s.moe.chip_tokens.size() == 8u / config.pp);
        }
      }
    }
  });
  return 0;
}
