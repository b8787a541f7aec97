#include <catch2/catch.hpp>

#include "collectives/algorithm.hpp"
#include "collectives/cost.hpp"
#include "recording_transport.hpp"
#include "topology/registry.hpp"

using namespace ultrasim;
using ultrasim::test::run_on_fake;

TEST_CASE("direct all-to-all sends part j to chip j, all in one step") {
  auto algorithm = find_algorithm("alltoall", "direct").make_with_defaults();
  auto run = run_on_fake(*algorithm, CollectiveKind::kAlltoall, 5, 1003);
  CHECK(run.verdict.wrong == 0);
  CHECK(run.steps() == 1);
  CHECK(run.sent.size() == 5 * 4);
  auto parts = even_chunks(1003, 5);  // 201, 201, 201, 200, 200
  for (const auto& s : run.sent) CHECK(s.bytes == parts[s.dst]);
  for (int r = 0; r < 5; ++r) CHECK(run.bytes_sent_by(r) == 1003 - parts[r]);
  CHECK(run_on_fake(*algorithm, CollectiveKind::kAlltoall, 1, 64).verdict.wrong == 0);
  CHECK(run_on_fake(*algorithm, CollectiveKind::kAlltoall, 9, 4).verdict.wrong == 0);
}

TEST_CASE("direct all-to-all model on a switch is a + (p-1) ceil(n/p) / B") {
  Topology t = make_topology("switch:16", {}, {{"link_latency", "1us"}});
  Routes routes(t);
  auto algorithm = find_algorithm("alltoall", "direct").make_with_defaults();
  CostInput in{routes, 16, (1 << 30) + 5, 0.0, std::nullopt};
  double part = std::ceil(((1 << 30) + 5) / 16.0);
  CHECK(algorithm->model_s(in) == Approx(2e-6 + 15 * part / 100e9).epsilon(1e-12));
}

TEST_CASE("lower bounds follow the bytes each chip must move over its injection bandwidth") {
  Topology t = make_topology("ring:8", {}, {});  // two 100 GB/s links per chip
  Routes routes(t);
  const std::uint64_t n = 8 << 20;
  CostInput in{routes, 8, n, 0.0, std::nullopt};
  const double a = 500e-9, inject = 200e9;
  CHECK(lower_bound_s(CollectiveKind::kAllreduce, in) == Approx(a + 2.0 * 7 / 8 * n / inject));
  CHECK(lower_bound_s(CollectiveKind::kAllgather, in) == Approx(a + 7.0 / 8 * n / inject));
  CHECK(lower_bound_s(CollectiveKind::kReducescatter, in) == Approx(a + 7.0 / 8 * n / inject));
  CHECK(lower_bound_s(CollectiveKind::kAlltoall, in) == Approx(a + 7.0 / 8 * n / inject));
  CostInput one{routes, 1, n, 0.0, std::nullopt};
  CHECK(lower_bound_s(CollectiveKind::kAllreduce, one) == 0.0);
}
