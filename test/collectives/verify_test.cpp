#include <catch2/catch.hpp>

#include "collectives/algorithm.hpp"
#include "mutants.hpp"
#include "recording_transport.hpp"

using namespace ultrasim;
using ultrasim::test::run_on_fake;

using ultrasim::test::ReducesTwice;
using ultrasim::test::SkipsLastStep;

TEST_CASE("the verifier rejects a schedule that leaves chips with missing contributions") {
  auto run = run_on_fake(SkipsLastStep(), CollectiveKind::kAllreduce, 6, 6000);
  CHECK(run.verdict.wrong == 6);  // every chip misses exactly one chunk
  CHECK_THAT(run.verdict.first_error, Catch::Contains("expected 6"));
}

TEST_CASE("the verifier rejects a schedule that counts a contribution twice") {
  auto run = run_on_fake(ReducesTwice(), CollectiveKind::kAllreduce, 5, 5000);
  CHECK(run.verdict.wrong == 5 * 5);  // the doubled chunk, reduced on, spoils every chunk of every chip
}

TEST_CASE("the verifier checks content, not only counts") {
  const int p = 3;
  std::vector<std::vector<Contribution>> finals(p);
  for (int r = 0; r < p; ++r)
    for (int c = 0; c < p; ++c) {
      Contribution all;
      for (int k = 0; k < p; ++k) all.add(contribution_of(k, c));
      finals[r].push_back(all);
    }
  CHECK(verify(CollectiveKind::kAllreduce, p, p, finals).wrong == 0);
  SECTION("a contribution from the wrong chunk, same count") {
    finals[1][2] = Contribution{};
    for (int k = 0; k < p; ++k) finals[1][2].add(contribution_of(k, k == 0 ? 1 : 2));
    Verdict v = verify(CollectiveKind::kAllreduce, p, p, finals);
    CHECK(v.wrong == 1);
    CHECK_THAT(v.first_error, Catch::Contains("chip1 slot 2") && Catch::Contains("wrong content"));
  }
  SECTION("one rank counted twice, another missing") {
    finals[2][0] = Contribution{};
    for (int k : {0, 0, 2}) finals[2][0].add(contribution_of(k, 0));
    CHECK(verify(CollectiveKind::kAllreduce, p, p, finals).wrong == 1);
  }
}

TEST_CASE("all-to-all verification expects part r of every chip s in slot p+s of chip r") {
  const int p = 3;
  std::vector<std::vector<Contribution>> finals(p, std::vector<Contribution>(2 * p));
  for (int r = 0; r < p; ++r)
    for (int s = 0; s < p; ++s) finals[r][p + s] = contribution_of(s, r);
  CHECK(verify(CollectiveKind::kAlltoall, p, p, finals).wrong == 0);
  std::swap(finals[0][p + 1], finals[0][p + 2]);
  CHECK(verify(CollectiveKind::kAlltoall, p, p, finals).wrong == 2);
}
