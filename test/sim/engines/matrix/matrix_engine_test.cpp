// The traffic-matrix engine (sim/engines/matrix/matrix_engine.hpp): a chain of all-to-allv exchanges priced
// from its matrices, without the chips' programs. At window 0 it is the flow engine's max-min on the same
// messages, so it gives the flow engine's times to rounding, chip by chip and record by record, stragglers
// included; at its row's window it stays within its published error.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "sim/engines/flow/flow_engine.hpp"
#include "sim/engines/matrix/matrix_engine.hpp"
#include "sim/machine/chip_model.hpp"
#include "topology/base/errors.hpp"
#include "workloads/moe/moe_layer.hpp"
#include "workloads/workload_metrics.hpp"

using namespace ultrasim;

namespace {

// A random-router layer (64 experts, top-4, 64 tokens per chip) on `topology`: contended, flows ending at
// many times, each chip's expert time its own.
struct Layer {
  Machine machine;
  std::unique_ptr<MoeLayer> program;
};

Layer random_layer(const std::string& topology, double zipf = 0) {
  MoeConfig config;
  config.topology = topology;
  config.experts = 64, config.top_k = 4, config.tokens_per_chip = 64, config.hidden = 2048, config.ffn = 1024;
  config.router = "random", config.seed = 3, config.zipf = zipf;
  Layer layer{build_machine(topology, {}, {}, true), nullptr};
  const ParamSet params = with_params(layer.machine.topology->params(), chip_params(), {});
  layer.program = make_moe_layer(route_tokens(config, layer.machine.p(), 0), config, params);
  return layer;
}

void check_same_run(const SimResult& exact, const SimResult& matrix) {
  CHECK(matrix.time_s == Approx(exact.time_s).epsilon(1e-9));
  REQUIRE(matrix.chip_finish.size() == exact.chip_finish.size());
  for (std::size_t r = 0; r < exact.chip_finish.size(); ++r)
    CHECK(matrix.chip_finish[r] == Approx(exact.chip_finish[r]).epsilon(1e-9));
  CHECK(matrix.transfers == exact.transfers);
  CHECK(matrix.bytes_sent == exact.bytes_sent);
  REQUIRE(matrix.transfer_records.size() == exact.transfer_records.size());
  auto key = [](const TransferRecord& x) { return std::tuple(x.src, x.dst, x.step, x.path); };
  auto sorted = [&](std::vector<TransferRecord> v) {
    std::sort(v.begin(), v.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
    return v;
  };
  const auto a = sorted(exact.transfer_records), b = sorted(matrix.transfer_records);
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    REQUIRE(key(a[i]) == key(b[i]));
    CHECK(a[i].bytes == b[i].bytes);
    for (auto [x, y] : {std::pair(a[i].start, b[i].start), std::pair(a[i].wire_end, b[i].wire_end),
                        std::pair(a[i].end, b[i].end)})
      worst = std::max(worst, std::abs(x - y) / exact.time_s);
  }
  CHECK(worst < 1e-9);
  CHECK(matrix.verdict.wrong == 0);
}

}  // namespace

TEST_CASE("at window 0 the matrix engine gives the flow engine's layer: every chip, every record, to 1e-9") {
  for (const auto& [topology, zipf] :
       {std::pair("trn3-gen1", 0.0), std::pair("nvl72", 1.2), std::pair("cluster:2:hgx-h100", 0.0)}) {
    CAPTURE(topology);
    Layer layer = random_layer(topology, zipf);
    const EngineOutcome exact = simulate_flow(layer.machine, *layer.program, true, 0, Engine::kFlow);
    const EngineOutcome matrix = simulate_matrix(layer.machine, *layer.program, true, 0, Engine::kMatrix);
    REQUIRE(exact.result);
    REQUIRE(matrix.result);
    CHECK(matrix.result->engine == Engine::kMatrix);
    check_same_run(*exact.result, *matrix.result);
    // The experts' compute between the phases is recorded as the flow engine records it.
    CHECK(matrix.result->compute_records.size() == exact.result->compute_records.size());
  }
}

TEST_CASE("stragglers: a late chip sends late and a slow chip computes longer, as in the flow engine") {
  Layer layer = random_layer("trn3-gen1");
  layer.machine.faults = plan_faults({"late-chip:3@2us", "slow-chip:5=3"}, *layer.machine.topology);
  const EngineOutcome exact = simulate_flow(layer.machine, *layer.program, true, 0, Engine::kFlow);
  const EngineOutcome matrix = simulate_matrix(layer.machine, *layer.program, true, 0, Engine::kMatrix);
  REQUIRE(exact.result);
  REQUIRE(matrix.result);
  check_same_run(*exact.result, *matrix.result);
  // Chip 3 sent nothing before its start.
  for (const auto& x : matrix.result->transfer_records)
    if (x.src == 3) CHECK(x.start >= 2e-6);
  const Layer plain = random_layer("trn3-gen1");
  const EngineOutcome fault_free = simulate_matrix(plain.machine, *plain.program, false, 0, Engine::kMatrix);
  CHECK(matrix.result->time_s > fault_free.result->time_s);
}

TEST_CASE("at its row's windows the matrix engine is within 0.5 % of exact on a contended layer") {
  Layer layer = random_layer("trn3-gen1");
  const EngineOutcome exact = simulate_flow(layer.machine, *layer.program, false, 0, Engine::kFlow);
  const EngineOutcome matrix = simulate_matrix(layer.machine, *layer.program, false, 0.01, Engine::kMatrix);
  REQUIRE(matrix.result);
  const double rel = (matrix.result->time_s - exact.result->time_s) / exact.result->time_s;
  CHECK(rel != 0);  // an approximation: it defers solves
  CHECK(std::abs(rel) < 0.005);
}

TEST_CASE("the matrix engine declines what is not a chain of exchanges, and link faults, naming them") {
  SECTION("a micro-chunked layer overlaps its phases") {
    MoeConfig config;
    config.experts = 16, config.top_k = 2, config.tokens_per_chip = 8, config.hidden = 256;
    config.micro_chunks = 2;
    Machine machine = build_machine("switch:4", {}, {}, true);
    const ParamSet params = with_params(machine.topology->params(), chip_params(), {});
    const auto program = make_moe_layer(route_tokens(config, 4, 0), config, params);
    const EngineOutcome out = simulate_matrix(machine, *program, false, 0.01, Engine::kMatrix);
    CHECK(!out.result);
    CHECK(out.declined ==
          "a layer of 2 micro-chunks overlaps its phases; it prices one chunk's dispatch, "
          "compute and combine only");
  }
  SECTION("link faults") {
    Layer layer = random_layer("trn3-gen1");
    const std::string link = layer.machine.topology->links().front().name;
    layer.machine.faults = plan_faults({"link-down:" + link + "@1us"}, *layer.machine.topology);
    const EngineOutcome out = simulate_matrix(layer.machine, *layer.program, false, 0.01, Engine::kMatrix);
    CHECK(!out.result);
    CHECK(out.declined == "link faults are modelled by the SimGrid engine only");
  }
}
