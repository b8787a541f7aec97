// The run driver end to end in SimGrid with test-only mutant algorithms: a wrong result is caught by the
// verifier, a schedule that never completes is reported as a deadlock, not a hang.
#include <catch2/catch.hpp>

#include "mutants.hpp"
#include "sim/runner.hpp"
#include "sim_child.hpp"
#include "topology/errors.hpp"

using namespace ultrasim;

namespace {

PreparedJob job_with(std::unique_ptr<Algorithm> mutant) {
  PreparedJob job = prepare(CollectiveJob{"switch:4", "allreduce", "ring", 4096, "float32", 0, {}});
  job.algorithm = std::move(mutant);
  return job;
}

}  // namespace

TEST_CASE("in the simulator, a schedule that skips a step is caught by the verifier") {
  auto out = test::in_child([] {
    SimResult result = simulate(job_with(std::make_unique<test::SkipsLastStep>()), RunOptions{});
    return std::vector<double>{static_cast<double>(result.verdict.wrong), result.time_s};
  });
  CHECK(out[0] == 4);  // each chip misses one chunk
  CHECK(out[1] > 0);   // it did run, and faster than a correct ring would
}

TEST_CASE("a schedule that never completes ends the run with a deadlock error naming the chip") {
  auto out = test::in_child([] {
    try {
      simulate(job_with(std::make_unique<test::WaitsForever>()), RunOptions{});
    } catch (const SimulationError& e) {
      std::string what = e.what();
      return std::vector<double>{1.0, what.find("deadlock") != std::string::npos ? 1.0 : 0.0,
                                 what.find("chip0 waits for chip1 step 99") != std::string::npos ? 1.0 : 0.0};
    }
    return std::vector<double>{0.0, 0.0, 0.0};
  });
  CHECK(out == std::vector<double>{1.0, 1.0, 1.0});
}
