// Every registered algorithm, on the recording fake: verified for the chip counts and sizes that break
// naive schedules (1 byte, fewer bytes than chips, sizes not divisible by p, primes, non-powers of two).
#include <catch2/catch.hpp>

#include <algorithm>

#include "cli_runner.hpp"
#include "recording_transport.hpp"

using namespace ultrasim;
using ultrasim::test::grid_chips;
using ultrasim::test::run_on_fake;

TEST_CASE("every algorithm computes its collective for any chip count and size") {
  for (const AlgorithmEntry& entry : algorithms()) {
    auto algorithm = entry.make_with_defaults();
    CollectiveKind kind = find_collective(entry.collective).kind;
    for (int p : grid_chips({1, 2, 3, 5, 7, 8, 12, 16, 144})) {
      for (std::uint64_t bytes : {std::uint64_t{1}, std::uint64_t(p > 1 ? p - 1 : 0), std::uint64_t{4096},
                                  std::uint64_t{1000003}}) {
        INFO(entry.collective << " " << entry.name << " p=" << p << " bytes=" << bytes);
        auto run = run_on_fake(*algorithm, kind, p, bytes);
        CHECK(run.verdict.wrong == 0);
        CHECK(run.verdict.first_error.empty());
      }
    }
  }
}

TEST_CASE("the registry names every algorithm once per collective and lists it") {
  std::set<std::pair<std::string, std::string>> seen;
  for (const AlgorithmEntry& entry : algorithms()) {
    CHECK(seen.insert({entry.collective, entry.name}).second);
    CHECK(&find_algorithm(entry.collective, entry.name) == &entry);
    CHECK_FALSE(entry.description.empty());
  }
  for (const auto& collective : collectives()) {  // every collective has an algorithm
    INFO(collective.name);
    CHECK(
        std::any_of(seen.begin(), seen.end(), [&](const auto& row) { return row.first == collective.name; }));
  }
}
