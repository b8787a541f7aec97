// The run driver end to end in SimGrid with test-only mutant algorithms: a wrong result is caught by the
// verifier, a schedule that never completes is reported as a deadlock, not a hang.
#include <catch2/catch.hpp>

#include "mutants.hpp"
#include "sim/engines/runner.hpp"
#include "sim_child.hpp"
#include "topology/base/errors.hpp"
#include "workloads/collective/collective_run.hpp"

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

TEST_CASE("the child-process pool returns each child's values in order, and names the first that fails") {
  CHECK(child_jobs() >= 1);
  const auto squares = run_in_children(
      7,
      [](std::size_t i) {
        return std::vector<double>{static_cast<double>(i * i), 0.5};
      },
      [](std::size_t) { FAIL("no child fails"); }, nullptr, 3);
  REQUIRE(squares.size() == 7);
  for (std::size_t i = 0; i < 7; ++i) CHECK(squares[i] == std::vector<double>{double(i * i), 0.5});
  // Children 2 and 4 throw, child 5's value is refused: failed() hears of 2, the first in order.
  std::size_t named = 99;
  CHECK_THROWS_WITH(run_in_children(
                        6,
                        [](std::size_t i) {
                          if (i == 2 || i == 4) throw std::runtime_error("no");
                          return std::vector<double>{i == 5 ? -1.0 : 1.0};
                        },
                        [&](std::size_t i) {
                          named = i;
                          throw SimulationError("child " + std::to_string(i));
                        },
                        nullptr, 2),
                    "child 2");
  CHECK(named == 2);
  CHECK_THROWS_WITH(
      run_in_children(
          6, [](std::size_t i) { return std::vector<double>{i == 5 ? -1.0 : 1.0}; },
          [&](std::size_t i) { named = i; }, [](const std::vector<double>& v) { return v.front() >= 0; }),
      "a child process failed");  // failed() returned: the pool throws its own
  CHECK(named == 5);
}

TEST_CASE("auto without SimGrid: what the contention-free and contended engines decline is an error") {
  // An in-switch all-reduce: only SimGrid models it. A process that simulates many runs (serve) turns the
  // fallback off; auto then refuses instead of starting SimGrid, whatever the contended engine.
  for (const Engine contended : {Engine::kFlow, Engine::kFast}) {
    INFO(engine_name(contended));
    CollectiveJob c{
        "switch:8", "allreduce", "switch-reduce", 1 << 20, "float32", 0, {{"switch_reduction", "true"}}};
    PreparedJob job = prepare(c);
    RunOptions options;
    options.contended = contended;
    options.simgrid_fallback = false;
    CHECK_THROWS_AS(simulate(job, options), SimulationError);
    CHECK_THROWS_WITH(simulate(job, options),
                      Catch::Contains("engine cannot run this, and SimGrid runs once per process"));
  }
}
