// The run driver end to end in SimGrid with test-only mutant algorithms: a wrong result is caught by the
// verifier, a schedule that never completes is reported as a deadlock, not a hang.
#include <catch2/catch.hpp>

#include "mutants.hpp"
#include "sim/engines/runner.hpp"
#include "sim_child.hpp"
#include "topology/base/errors.hpp"
#include "workloads/collective/collective_program.hpp"

using namespace ultrasim;

namespace {

// Ring all-reduce that waits on every receive a second time before using it: still correct.
class WaitsTwice : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    for (int s = 0; s < 2 * (p - 1); ++s) {
      int chunk = s < p - 1 ? r - s : r + 1 - (s - (p - 1));  // reduce-scatter, then all-gather
      auto sent = me.send((r + 1) % p, s, {(chunk % p + p) % p});
      auto received = me.recv((r + p - 1) % p, s);
      me.wait({sent, received});
      me.wait({received});
      s < p - 1 ? me.reduce(received) : me.copy(received);
    }
  }
  double model_s(const CostInput&) const override { return 0; }
};

PreparedJob job_with(std::unique_ptr<Algorithm> mutant) {
  PreparedJob job = prepare(CollectiveJob{"switch:4", "allreduce", "ring", 4096, "float32", 0, {}});
  job.algorithm = std::move(mutant);
  return job;
}

}  // namespace

TEST_CASE("in the simulator, a schedule that skips a step is caught by the verifier") {
  for (Engine engine : {Engine::kSimGrid, Engine::kContentionFree}) {
    INFO(engine_name(engine));
    auto out = test::in_child([engine] {
      RunOptions options;
      options.engine = engine;
      SimResult result = simulate(job_with(std::make_unique<test::SkipsLastStep>()), options);
      return std::vector<double>{static_cast<double>(result.verdict.wrong), result.time_s};
    });
    CHECK(out[0] == 4);  // each chip misses one chunk
    // Five ring steps of one 1024-byte chunk over two 500 ns links each, not the correct ring's six.
    CHECK(out[1] == Approx(5 * (1e-6 + 1024 / 100e9)).epsilon(1e-9));
  }
}

TEST_CASE("a schedule that never completes ends the run with a deadlock error naming the chip") {
  for (Engine engine : {Engine::kSimGrid, Engine::kContentionFree}) {
    INFO(engine_name(engine));
    auto out = test::in_child([engine] {
      try {
        RunOptions options;
        options.engine = engine;
        simulate(job_with(std::make_unique<test::WaitsForever>()), options);
      } catch (const SimulationError& e) {
        std::string what = e.what();
        return std::vector<double>{
            1.0, what.find("deadlock") != std::string::npos ? 1.0 : 0.0,
            what.find("chip0 waits for chip1 step 99") != std::string::npos ? 1.0 : 0.0};
      }
      return std::vector<double>{0.0, 0.0, 0.0};
    });
    CHECK(out == std::vector<double>{1.0, 1.0, 1.0});
  }
}

TEST_CASE("waiting on a receive a second time keeps its message and records the transfer once") {
  for (Engine engine : {Engine::kSimGrid, Engine::kContentionFree}) {
    INFO(engine_name(engine));
    auto out = test::in_child([engine] {
      RunOptions options;
      options.record = true;
      options.engine = engine;
      SimResult result = simulate(job_with(std::make_unique<WaitsTwice>()), options);
      return std::vector<double>{static_cast<double>(result.verdict.wrong),
                                 static_cast<double>(result.transfer_records.size())};
    });
    CHECK(out[0] == 0);
    CHECK(out[1] == 4 * 6);  // one record per transfer
  }
}
