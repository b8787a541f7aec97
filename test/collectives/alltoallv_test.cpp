// All-to-allv on the recording fake and in closed form: every chip ends with exactly what the matrix
// sends it, each algorithm moves the matrix's bytes the way its textbook plan says, and model_s and
// bound_s follow the formulas in the algorithms' headers.
#include <catch2/catch.hpp>

#include "collectives/cost.hpp"
#include "mutants.hpp"
#include "recording_transport.hpp"
#include "topology/registry.hpp"
#include "traffic_matrices.hpp"

using namespace ultrasim;
using ultrasim::test::run_on_fake;

namespace {

std::unique_ptr<Algorithm> alltoallv(const std::string& name) {
  return find_algorithm("alltoallv", name).make_with_defaults();
}

std::uint64_t off_diagonal_row(const TrafficMatrix& m, int r) {
  return m.sent_by(r) - m.bytes(r, r);
}

}  // namespace

TEST_CASE("a traffic matrix knows each chip's row, column, load and the busiest chip") {
  TrafficMatrix m({{5, 10, 0}, {1, 0, 2}, {40, 0, 7}});
  CHECK(m.p() == 3);
  CHECK(m.bytes(2, 0) == 40);
  CHECK(m.sent_by(2) == 47);
  CHECK(m.received_by(0) == 46);
  CHECK(m.total() == 65);
  CHECK(m.busiest_chip() == 2);  // sends 47, more than chip 0 receives (46)
  CHECK(m.busiest_load() == 47);
  CHECK(m.fabric_load(2) == 40);  // 47 - 7 copied locally
  CHECK(m.fabric_load(0) == 41);  // receives 41 from others
  CHECK_THROWS_WITH(TrafficMatrix({{1, 2}, {3}}), Catch::Contains("row 1 has 1 entries"));
  CHECK_THROWS_WITH(TrafficMatrix({{1, 2}}), Catch::Contains("square"));
  CHECK_THROWS_WITH(TrafficMatrix({}), Catch::Contains("no rows"));
  CHECK_THROWS_WITH(TrafficMatrix({{~0ULL, 1}, {0, 0}}), Catch::Contains("2^64"));
}

TEST_CASE("the uniform matrix of size n is all-to-all's: every chip sends and receives n") {
  TrafficMatrix even = TrafficMatrix::uniform(8000, 8);
  for (int s = 0; s < 8; ++s)
    for (int d = 0; d < 8; ++d) CHECK(even.bytes(s, d) == 1000);
  TrafficMatrix uneven = TrafficMatrix::uniform(1003, 5);  // parts 201, 201, 201, 200, 200
  for (int r = 0; r < 5; ++r) {
    CHECK(uneven.sent_by(r) == 1003);
    CHECK(uneven.received_by(r) == 1003);
    CHECK(uneven.bytes(r, (r + 3) % 5) == 200);
  }
  CHECK(uneven.busiest_load() == 1003);
  CHECK(uneven.total() == 5 * 1003);
}

TEST_CASE("both algorithms deliver every non-zero part, and nothing else, for uneven matrices") {
  for (const char* name : {"direct", "pairwise"}) {
    auto algorithm = alltoallv(name);
    for (int p : {1, 2, 3, 7, 16, 144}) {
      for (std::uint64_t seed : {1, 2}) {
        TrafficMatrix m(test::random_matrix(p, seed * 1000 + p, 1 << 20));
        INFO(name << " p=" << p << " seed=" << seed);
        auto run = run_on_fake(*algorithm, m);
        CHECK(run.verdict.wrong == 0);
        CHECK(run.verdict.first_error.empty());
      }
    }
  }
}

TEST_CASE("a zero entry moves nothing: an all-zero matrix makes no transfer") {
  for (const char* name : {"direct", "pairwise"}) {
    auto run = run_on_fake(*alltoallv(name), TrafficMatrix(test::Rows(5, std::vector<std::uint64_t>(5, 0))));
    CHECK(run.verdict.wrong == 0);
    CHECK(run.sent.empty());
  }
}

TEST_CASE("direct all-to-allv sends bytes(r, j) to every chip j with something to receive, in one step") {
  TrafficMatrix m(test::random_matrix(7, 42, 100000, 30));
  auto run = run_on_fake(*alltoallv("direct"), m);
  CHECK(run.verdict.wrong == 0);
  CHECK(run.steps() == 1);
  std::size_t flows = 0;
  for (int s = 0; s < 7; ++s)
    for (int d = 0; d < 7; ++d) flows += s != d && m.bytes(s, d) > 0;
  CHECK(run.sent.size() == flows);
  for (const auto& s : run.sent) CHECK(s.bytes == m.bytes(s.src, s.dst));
  for (int r = 0; r < 7; ++r) CHECK(run.bytes_sent_by(r) == off_diagonal_row(m, r));
}

TEST_CASE("pairwise all-to-allv sends bytes(r, r+k) to chip r+k in round k, skipping zeros") {
  TrafficMatrix m(test::random_matrix(7, 43, 100000, 30));
  auto run = run_on_fake(*alltoallv("pairwise"), m);
  CHECK(run.verdict.wrong == 0);
  for (const auto& s : run.sent) {
    CHECK(s.dst == (s.src + s.step) % 7);
    CHECK(s.bytes == m.bytes(s.src, s.dst));
    CHECK(s.bytes > 0);
  }
  for (int r = 0; r < 7; ++r) CHECK(run.bytes_sent_by(r) == off_diagonal_row(m, r));
  // A matrix whose only traffic is to the next chip takes one round, not p-1.
  test::Rows next(6, std::vector<std::uint64_t>(6, 0));
  for (int r = 0; r < 6; ++r) next[r][(r + 1) % 6] = 1000;
  auto ring = run_on_fake(*alltoallv("pairwise"), TrafficMatrix(next));
  CHECK(ring.steps() == 1);
  CHECK(ring.sent.size() == 6);
}

TEST_CASE("all-to-allv mutants are caught by the verifier") {
  TrafficMatrix m(test::random_matrix(6, 7, 5000, 30));
  std::uint64_t own_parts = 0, zeros = 0;
  for (int r = 0; r < 6; ++r) {
    own_parts += m.bytes(r, r) > 0;
    for (int s = 0; s < 6; ++s) zeros += m.bytes(s, r) == 0;
  }
  REQUIRE(own_parts > 0);
  REQUIRE(zeros > 0);
  SECTION("one that never copies its own part") {
    CHECK(run_on_fake(test::ForgetsOwnPart(), m).verdict.wrong == own_parts);
  }
  SECTION("uniform all-to-all's direct algorithm, which also sends the zero-byte parts") {
    auto run = run_on_fake(*find_algorithm("alltoall", "direct").make_with_defaults(), m);
    CHECK(run.verdict.wrong == zeros);  // every zero pair, diagonal included, received a contribution
  }
}

TEST_CASE("on a switch direct's model is a + the busiest chip's row or column / B, pairwise's its rounds") {
  Topology t = make_topology("switch:5", {}, {});
  Routes routes(t);
  const double a = 1e-6, B = 100e9;
  TrafficMatrix m(
      {{9, 1000, 0, 500, 500}, {0, 0, 0, 0, 0}, {0, 1000, 7, 500, 500}, {0, 0, 0, 0, 0}, {300, 0, 0, 0, 0}});
  CostInput in{routes, 5, m.busiest_load(), 0.0, std::nullopt, &m};
  CHECK(alltoallv("direct")->model_s(in) == Approx(a + 2000 / B).epsilon(1e-12));  // into chip 1
  // Per-chip clocks: chip 0's round 1 ends when chip 4's 300 bytes arrive; it skips round 2 (nothing for
  // chip 2), sends 500 to chip 3 and 500 to chip 4 in rounds 3 and 4, which arrive α later. That is
  // longer than the busiest link, a + 2000/B.
  CHECK(alltoallv("pairwise")->model_s(in) == Approx(2 * a + (300 + 500 + 500) / B).epsilon(1e-12));
  // bound: chip 0 and 2 each push 2000 bytes, chip 1 pulls 2000, over one 100 GB/s link.
  CHECK(lower_bound_s(CollectiveKind::kAlltoallv, in) == Approx(a + 2000 / B).epsilon(1e-12));
}

TEST_CASE("for a circulant matrix pairwise's model is the sum of its non-empty rounds") {
  Topology t = make_topology("switch:6", {}, {});
  Routes routes(t);
  TrafficMatrix m(test::circulant_matrix(6, 3, 1 << 20));
  CostInput in{routes, 6, m.busiest_load(), 0.0, std::nullopt, &m};
  double expected = 0;
  for (int k = 1; k < 6; ++k)
    if (m.bytes(0, k) > 0) expected += 1e-6 + m.bytes(0, k) / 100e9;
  CHECK(alltoallv("pairwise")->model_s(in) == Approx(expected).epsilon(1e-12));
}

TEST_CASE("the uniform all-to-allv has the models and bound of all-to-all of the same size") {
  Topology t = make_topology("switch:8", {}, {});
  Routes routes(t);
  const std::uint64_t n = 8 << 20;
  TrafficMatrix m(test::Rows(8, std::vector<std::uint64_t>(8, n / 8)));
  CostInput v{routes, 8, m.busiest_load(), 0.0, std::nullopt, &m};
  CostInput uniform{routes, 8, n, 0.0, std::nullopt};
  CHECK(v.bytes == n);
  for (const char* name : {"direct", "pairwise"}) {
    double all = find_algorithm("alltoall", name).make_with_defaults()->model_s(uniform);
    CHECK(alltoallv(name)->model_s(v) == Approx(all).epsilon(1e-12));
    CHECK(alltoallv(name)->model_s(uniform) == Approx(all).epsilon(1e-12));  // null matrix = uniform
  }
  CHECK(lower_bound_s(CollectiveKind::kAlltoallv, v) ==
        Approx(lower_bound_s(CollectiveKind::kAlltoall, uniform)).epsilon(1e-12));
}

TEST_CASE("nothing crossing the fabric costs nothing and has no bound") {
  Topology t = make_topology("switch:3", {}, {});
  Routes routes(t);
  TrafficMatrix local({{100, 0, 0}, {0, 100, 0}, {0, 0, 100}});
  CostInput in{routes, 3, local.busiest_load(), 0.0, std::nullopt, &local};
  CHECK(alltoallv("direct")->model_s(in) == 0.0);
  CHECK(alltoallv("pairwise")->model_s(in) == 0.0);
  CHECK(lower_bound_s(CollectiveKind::kAlltoallv, in) == 0.0);
}
