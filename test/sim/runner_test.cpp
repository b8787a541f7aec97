// The run driver end to end in SimGrid with test-only mutant algorithms: a wrong result is caught by the
// verifier, a schedule that never completes is reported as a deadlock, not a hang.
#include <catch2/catch.hpp>

#include "collectives/ring_pass.hpp"
#include "sim/runner.hpp"
#include "sim_child.hpp"
#include "topology/errors.hpp"

using namespace ultrasim;

namespace {

// Ring all-reduce that forgets the last all-gather step: fast, and wrong on every chip.
class ForgetsLastStep : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    ring_pass(me, 0, 0, OnArrival::kReduce);
    for (int s = 0; s < p - 2; ++s) {
      auto sent = me.send((r + 1) % p, p - 1 + s, {((r + 1 - s) % p + p) % p});
      auto received = me.recv((r + p - 1) % p, p - 1 + s);
      me.wait({sent, received});
      me.copy(received);
    }
  }
  double model_s(const CostInput&) const override { return 0; }
};

// Chip 0 waits for a message nobody sends.
class WaitsForever : public Algorithm {
 public:
  void run(Chip& me) const override {
    if (me.rank() == 0) me.wait({me.recv(1, 99)});
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
  auto out = test::in_child([] {
    SimResult result = simulate(job_with(std::make_unique<ForgetsLastStep>()), RunOptions{});
    return std::vector<double>{static_cast<double>(result.verdict.wrong), result.time_s};
  });
  CHECK(out[0] == 4);  // each chip misses one chunk
  CHECK(out[1] > 0);   // it did run, and faster than a correct ring would
}

TEST_CASE("a schedule that never completes ends the run with a deadlock error naming the chip") {
  auto out = test::in_child([] {
    try {
      simulate(job_with(std::make_unique<WaitsForever>()), RunOptions{});
    } catch (const SimulationError& e) {
      std::string what = e.what();
      return std::vector<double>{1.0, what.find("deadlock") != std::string::npos ? 1.0 : 0.0,
                                 what.find("chip0 waits for chip1 step 99") != std::string::npos ? 1.0 : 0.0};
    }
    return std::vector<double>{0.0, 0.0, 0.0};
  });
  CHECK(out == std::vector<double>{1.0, 1.0, 1.0});
}
