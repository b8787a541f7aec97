// MoE workload files (`ultrasim workload FILE`, workloads/moe/moe.hpp): what the parser accepts must route
// (on 8 chips, when small enough to route quickly) into copies that add up: every routed copy kept or
// dropped, no chip sending more tokens than it has.
#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "workloads/moe/moe.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ultrasim;
  const std::string text = fuzz::text_of(data, size);
  const nlohmann::json workload = nlohmann::json::parse(text, nullptr, false);
  if (workload.is_discarded()) return 0;  // not JSON: the command reports it before the parser runs
  fuzz::accepts_or_rejects([&] {
    const MoeConfig config = moe_config_from_json(workload, "fuzz.json");
    if (config.experts > 64 || config.tokens_per_chip > 64 || config.hidden > 4096 || config.ffn > 4096)
      return;
    const MoeRouting r = route_tokens(config, 8, 0);
    std::uint64_t kept = 0;
    for (int s = 0; s < 8; ++s)
      for (int e = 0; e < config.experts; ++e) kept += r.copies[s][e];
    fuzz::check(kept + r.dropped == r.routed);
    for (int s = 0; s < 8; ++s) {
      std::uint64_t sent = 0;
      for (int d = 0; d < 8; ++d) sent += r.dispatch_tokens[s][d];
      fuzz::check(sent <= config.tokens_per_chip * 8);
    }
    const MoeSizes sizes = moe_sizes(config);
    dispatch_matrix(r, config.hidden, sizes.dispatch).busiest_load();
  });
  return 0;
}
