// Pipeline schedules (workloads/training/pipeline_schedule.hpp): the orders played out with uniform passes
// meet the bubbles of their papers exactly, and hold what their memory promises.
#include <catch2/catch.hpp>

#include "topology/base/errors.hpp"
#include "workloads/training/pipeline_schedule.hpp"

using namespace ultrasim;

namespace {

PipelineRun uniform(const std::string& schedule, int p, int m, int v, double f, double b, double send = 0) {
  PipelineCosts costs;
  costs.forward = [=](int, int) { return f / v; };  // a rank's layers cut into v chunks
  costs.backward = [=](int, int) { return b / v; };
  costs.send = [=](int from, int to) { return from == to ? 0.0 : send; };
  return run_pipeline(find_schedule(schedule).order(p, m, v), p, m, v, costs);
}

}  // namespace

TEST_CASE("1f1b and gpipe idle (p - 1) / (m + p - 1) of the step with uniform stages and free sends") {
  for (const char* schedule : {"1f1b", "gpipe"})
    for (auto [p, m] : {std::pair{2, 2}, {4, 4}, {4, 8}, {8, 32}, {16, 16}, {3, 7}}) {
      CAPTURE(schedule, p, m);
      const PipelineRun run = uniform(schedule, p, m, 1, 1.0, 2.0);
      CHECK(run.span == Approx((m + p - 1) * 3.0).epsilon(1e-12));
      CHECK(run.bubble() == Approx(double(p - 1) / (m + p - 1)).epsilon(1e-12));
    }
}

TEST_CASE("interleaved with v virtual stages idles (p - 1) / (v m + p - 1)") {
  for (auto [p, m, v] : {std::tuple{2, 4, 2}, {4, 8, 2}, {4, 8, 4}, {8, 16, 5}, {4, 12, 3}}) {
    CAPTURE(p, m, v);
    const PipelineRun run = uniform("interleaved", p, m, v, 1.0, 2.0);
    CHECK(run.bubble() == Approx(double(p - 1) / (v * m + p - 1)).epsilon(1e-12));
    CHECK(run.span == Approx(3.0 * m + 3.0 * (p - 1) / v).epsilon(1e-12));
  }
}

TEST_CASE(
    "a send between stages delays the gpipe step by 2 (p - 1) sends: the first forward's and last backward's "
    "way") {
  const int p = 4, m = 8;
  const PipelineRun run = uniform("gpipe", p, m, 1, 1.0, 2.0, 0.25);
  CHECK(run.span == Approx((m + p - 1) * 3.0 + 2 * (p - 1) * 0.25).epsilon(1e-12));
}

TEST_CASE(
    "1f1b holds at most p - r micro-batches on rank r, gpipe all of them, interleaved Megatron's warm-up") {
  const int p = 4, m = 8, v = 2;
  const auto one = peak_in_flight(find_schedule("1f1b").order(p, m, 1));
  const auto all = peak_in_flight(find_schedule("gpipe").order(p, m, 1));
  const auto inter = peak_in_flight(find_schedule("interleaved").order(p, m, v));
  for (int r = 0; r < p; ++r) {
    CHECK(one[r] == p - r);
    CHECK(all[r] == m);
    CHECK(inter[r] == std::min(m * v, 2 * (p - r - 1) + (v - 1) * p + 1));
  }
}

TEST_CASE("every pass of every micro-batch and chunk runs once, forward before backward") {
  for (const char* schedule : {"1f1b", "gpipe", "interleaved"}) {
    const int p = 4, m = 8, v = std::string(schedule) == "interleaved" ? 3 : 1;
    const auto order = find_schedule(schedule).order(p, m, v);
    for (int r = 0; r < p; ++r) {
      std::vector<int> forwards(m * v, 0), backwards(m * v, 0);
      for (const PipePass& pass : order[r]) {
        const int k = pass.micro * v + pass.chunk;
        if (pass.forward) {
          ++forwards[k];
        } else {
          CHECK(forwards[k] == 1);
          ++backwards[k];
        }
      }
      CHECK(std::count(forwards.begin(), forwards.end(), 1) == m * v);
      CHECK(std::count(backwards.begin(), backwards.end(), 1) == m * v);
    }
  }
}

TEST_CASE("a schedule that cannot take the micro-batches is refused with the figures") {
  CHECK_THROWS_WITH(find_schedule("1f1b").check(8, 4, 1), Catch::Contains("4 micro-batches for pp 8"));
  CHECK_THROWS_WITH(find_schedule("interleaved").check(4, 6, 2), Catch::Contains("not a multiple of pp 4"));
  CHECK_THROWS_WITH(find_schedule("interleaved").check(4, 8, 1), Catch::Contains("--vp 2 or more"));
  CHECK_THROWS_WITH(find_schedule("1fb1"), Catch::Contains("did you mean '1f1b'"));
  CHECK_NOTHROW(find_schedule("gpipe").check(8, 1, 1));
}
