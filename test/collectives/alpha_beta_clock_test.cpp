// The α-β clock's contract (collectives/alpha_beta_clock.hpp): an algorithm's own program, every chip
// on its own clock, a send leaving after bytes/β and arriving α later, without contention. On a
// homogeneous fabric the ring gives the textbook closed forms; on a heterogeneous one the clock equals
// the same recurrences written by hand.
#include <catch2/catch.hpp>

#include <functional>
#include <stdexcept>

#include "collectives/alpha_beta_clock.hpp"
#include "collectives/cost.hpp"
#include "collectives/ring_pass.hpp"
#include "topology/registry.hpp"

using namespace ultrasim;

namespace {

// A program written in the test: `program` runs on every chip.
class Program : public Algorithm {
 public:
  explicit Program(std::function<void(Chip&)> program) : program_(std::move(program)) {}
  int chunks(int) const override { return 1; }
  void run(Chip& me) const override { program_(me); }
  double model_s(const CostInput&) const override { return 0; }

 private:
  std::function<void(Chip&)> program_;
};

std::unique_ptr<Algorithm> ring(const std::string& collective, int pieces = 1) {
  ParamSet params(ring_pipeline_table().specs());
  params.apply({{"pipeline_chunks", std::to_string(pieces)}});
  return find_algorithm(collective, "ring").make(params);
}

struct Fabric {
  explicit Fabric(const std::string& spec) : topology(make_topology(spec, none, {})), routes(topology) {}
  std::vector<ParamSpec> none;
  Topology topology;
  Routes routes;
};

}  // namespace

TEST_CASE("α-β clock: a ring on one switch costs the textbook (p-1)(α + c/β) per pass, c = ceil(n/p)") {
  Fabric f("switch:8");
  const double alpha = 1e-6, beta = 100e9, reduce = 50e9;  // chip-switch-chip: two 500 ns links
  for (std::uint64_t n : {std::uint64_t{8} << 20, std::uint64_t{1000003}}) {
    INFO("n=" << n);
    const double c = static_cast<double>((n + 7) / 8);
    CostInput in{f.routes, 8, n, 0.0, reduce};
    CHECK(alpha_beta_time(*ring("allgather"), CollectiveKind::kAllgather, in) ==
          Approx(7 * (alpha + c / beta)).epsilon(1e-12));
    CHECK(alpha_beta_time(*ring("reducescatter"), CollectiveKind::kReducescatter, in) ==
          Approx(7 * (alpha + c / beta + c / reduce)).epsilon(1e-12));
    CHECK(alpha_beta_time(*ring("allreduce"), CollectiveKind::kAllreduce, in) ==
          Approx(14 * (alpha + c / beta) + 7 * c / reduce).epsilon(1e-12));
  }
}

TEST_CASE(
    "ring model_s: the textbook closed form on a homogeneous ring is the clock's time, to the last bit") {
  for (const char* spec : {"switch:2", "switch:7", "ring:8", "switch:17", "torus:3x5", "switch:144"}) {
    Fabric f(spec);
    const int p = f.topology.chip_count();
    for (std::uint64_t n :
         {std::uint64_t{0}, std::uint64_t{3}, std::uint64_t{1000003}, std::uint64_t{64} << 20})
      for (std::optional<double> reduce : {std::optional<double>{}, std::optional<double>{50e9}})
        for (const char* collective : {"allreduce", "allgather", "reducescatter"}) {
          INFO(spec << " n=" << n << " " << collective << (reduce ? " reducing" : ""));
          CostInput in{f.routes, p, n, 0.0, reduce};
          auto algorithm = ring(collective);
          CHECK(algorithm->model_s(in) == alpha_beta_time(*algorithm, find_collective(collective).kind, in));
        }
  }
}

TEST_CASE("α-β clock: sends are one-sided and alone on the fabric, waits take the latest, compute adds") {
  // Three chips of trn3 in different servers and racks: every pair has its own α and β.
  Fabric f("trn3");
  CostInput in{f.routes, 3, 1, 0.0, std::nullopt, nullptr, {0, 5, 80}};
  REQUIRE(in.alpha(0, 1) != in.alpha(0, 2));
  REQUIRE(in.bandwidth(0, 1) != in.bandwidth(0, 2));
  const std::uint64_t a = 1 << 20, b = 2 << 20, c = 1 << 19;
  Program program([&](Chip& me) {
    if (me.rank() == 0) {  // two sends at once: each leaves at its own bytes/β
      auto to1 = me.send_sized(1, 0, 0, 0, a);
      auto to2 = me.send_sized(2, 0, 0, 0, b);
      me.wait({to1, to2});
    } else if (me.rank() == 1) {  // receive, compute 1 us, forward
      auto in0 = me.recv(0, 0);
      me.wait({in0});
      me.compute(1e-6, "work");
      auto to2 = me.send_sized(2, 1, 0, 0, c);
      me.wait({to2});
    } else {
      auto in0 = me.recv(0, 0), in1 = me.recv(1, 1);
      me.wait({in0, in1});
    }
  });
  const double left01 = a / in.bandwidth(0, 1), left02 = b / in.bandwidth(0, 2);
  const double chip0 = std::max(left01, left02);
  const double chip1 = left01 + in.alpha(0, 1) + 1e-6 + c / in.bandwidth(1, 2);
  const double chip2 = std::max(left02 + in.alpha(0, 2), chip1 + in.alpha(1, 2));
  CHECK(alpha_beta_time(program, CollectiveKind::kAllreduce, in) ==
        Approx(std::max({chip0, chip1, chip2})).epsilon(1e-12));
}

TEST_CASE("α-β clock: a ring all-gather over three chips of different α and β, by hand") {
  Fabric f("trn3");
  const std::uint64_t n = 3000001;  // parts of 1000001, 1000000 and 1000000 bytes
  CostInput in{f.routes, 3, n, 0.0, std::nullopt, nullptr, {0, 4, 72}};
  const std::vector<double> part{1000001, 1000000, 1000000};
  auto next = [](int r) { return (r + 1) % 3; };
  auto prev = [](int r) { return (r + 2) % 3; };
  // Step 0: chip r sends its part r right and receives part r-1. Step 1: it forwards part r-1 and
  // receives part r-2, which left r-1 when r-1's step 0 ended.
  std::vector<double> step0(3), step1(3);
  for (int r = 0; r < 3; ++r)
    step0[r] = std::max(part[r] / in.bandwidth(r, next(r)),
                        part[prev(r)] / in.bandwidth(prev(r), r) + in.alpha(prev(r), r));
  for (int r = 0; r < 3; ++r)
    step1[r] =
        std::max(step0[r] + part[prev(r)] / in.bandwidth(r, next(r)),
                 step0[prev(r)] + part[prev(prev(r))] / in.bandwidth(prev(r), r) + in.alpha(prev(r), r));
  CHECK(ring("allgather")->model_s(in) ==
        Approx(*std::max_element(step1.begin(), step1.end())).epsilon(1e-12));
}

TEST_CASE("α-β clock: on rounds of one send and one receive per chip it is rounds_time") {
  Fabric f("trn3");
  for (std::uint64_t n : {std::uint64_t{1000003}, std::uint64_t{64} << 20}) {
    CostInput in{f.routes, 144, n, 0.0, std::nullopt};
    const auto parts = even_chunks(n, 144);
    const double rounds = rounds_time(in, 143, [&](int k, std::vector<RoundTransfer>& out) {
      for (int r = 0; r < 144; ++r) out.push_back({r, (r + k + 1) % 144, parts[(r + k + 1) % 144], false});
    });
    CHECK(find_algorithm("alltoall", "pairwise").make_with_defaults()->model_s(in) ==
          Approx(rounds).epsilon(1e-12));
  }
}

TEST_CASE("α-β clock: the last chip's clock, one chip, failures are reported") {
  Fabric f("switch:4");
  CostInput in{f.routes, 4, 1024, 0.0, std::nullopt};
  Program idle([](Chip& me) { me.compute(1e-6 * me.rank(), "work"); });
  CHECK(alpha_beta_time(idle, CollectiveKind::kAllreduce, in) == Approx(3e-6).epsilon(1e-12));
  CostInput one{f.routes, 1, 1024, 0.0, std::nullopt};
  CHECK(alpha_beta_time(*ring("allreduce"), CollectiveKind::kAllreduce, one) == 0.0);

  Program deadlock([](Chip& me) { me.wait({me.recv((me.rank() + 1) % 4, 0)}); });
  CHECK_THROWS_AS(alpha_beta_time(deadlock, CollectiveKind::kAllreduce, in), std::logic_error);
  Program fails([](Chip& me) {
    if (me.rank() == 2) throw std::runtime_error("chip 2 fails");
    me.wait({me.recv(2, 0)});
  });
  CHECK_THROWS_WITH(alpha_beta_time(fails, CollectiveKind::kAllreduce, in), "chip 2 fails");
  Program in_switch([](Chip& me) { me.switch_reduce(0, {0, 1, 2, 3}, 0, {0}, {0}); });
  CHECK_THROWS_AS(alpha_beta_time(in_switch, CollectiveKind::kAllreduce, in), std::logic_error);
}
