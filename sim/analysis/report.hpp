// What every workload's result opens and closes with (the versions, the command, the verdict, the engine,
// the parameters), and --check-engine's result. Outputs carry no wall-clock values, so equal inputs give
// byte-identical outputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/analysis/explain.hpp"
#include "sim/analysis/link_stats.hpp"
#include "sim/engines/runner.hpp"

namespace ultrasim {

constexpr int kSchemaVersion = 1;
std::string ultrasim_version();

// The fields a workload's result (moe, training) opens with: the schema and ultrasim versions, the
// command, the workload's kind, its topology and its chips.
nlohmann::ordered_json workload_result(const std::string& command, const std::string& workload,
                                       const std::string& topology, int chips);
// The fields it closes with: verified, wrong (and first_error if any), transfers, engine, parameters.
// --check-engine's result: {"engine": "fast" or "matrix", "against": "flow", "exchanges", "contended",
// "max_rel_diff", "worst", "worst_fast_s", "worst_exact_s"}; also said on standard error in one line. When
// no checked exchange had contention (auto runs them all exactly on the contention-free engine), it says
// there was nothing to check, and the difference and worst are null.
nlohmann::ordered_json engine_check_json(const EngineCheck& check);

void close_workload_result(nlohmann::ordered_json& out, std::uint64_t wrong, const std::string& first_error,
                           const SimResult& result, const ParamSet& params);

}  // namespace ultrasim
