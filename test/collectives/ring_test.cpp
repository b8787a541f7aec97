#include <catch2/catch.hpp>

#include "collectives/algorithm.hpp"
#include "collectives/ring_pass.hpp"
#include "recording_transport.hpp"
#include "topology/registry.hpp"

using namespace ultrasim;
using ultrasim::test::run_on_fake;

namespace {

std::unique_ptr<Algorithm> make(const std::string& collective, int pieces = 1) {
  ParamSet params(ring_pipeline_table().specs());
  params.apply({{"pipeline_chunks", std::to_string(pieces)}});
  return find_algorithm(collective, "ring").make(params);
}

double model_on(const std::string& collective, const std::string& spec, std::uint64_t bytes,
                std::vector<std::pair<std::string, std::string>> sets = {}) {
  std::vector<ParamSpec> none;
  Topology t = make_topology(spec, none, sets);
  Routes routes(t);
  return make(collective)->model_s(CostInput{routes, t.chip_count(), bytes, 0.0, std::nullopt});
}

}  // namespace

TEST_CASE("ring all-reduce on 8 chips does 14 steps and each chip sends 2(p-1)/p of the buffer") {
  auto run = run_on_fake(*make("allreduce"), CollectiveKind::kAllreduce, 8, 8 << 20);
  CHECK(run.verdict.wrong == 0);
  CHECK(run.steps() == 14);
  CHECK(run.sent.size() == 8 * 14);
  for (int r = 0; r < 8; ++r) {
    CHECK(run.bytes_sent_by(r) == 2 * 7 * (1 << 20));
    for (const auto& s : run.sent)
      if (s.src == r) CHECK(s.dst == (r + 1) % 8);  // always to the right neighbour
  }
}

TEST_CASE("ring all-reduce handles sizes not divisible by p, smaller than p, and one chip") {
  SECTION("uneven chunks: every step moves the whole buffer once across the ring") {
    auto run = run_on_fake(*make("allreduce"), CollectiveKind::kAllreduce, 5, 1000003);
    CHECK(run.verdict.wrong == 0);
    std::uint64_t total = 0;
    for (const auto& s : run.sent) total += s.bytes;
    CHECK(total == 2 * 4 * 1000003ULL);
  }
  SECTION("3 bytes over 8 chips: five chunks are empty, the result is still complete") {
    auto run = run_on_fake(*make("allreduce"), CollectiveKind::kAllreduce, 8, 3);
    CHECK(run.verdict.wrong == 0);
    CHECK(run.sent.size() == 8 * 14);
  }
  SECTION("one chip: nothing moves") {
    auto run = run_on_fake(*make("allreduce"), CollectiveKind::kAllreduce, 1, 4096);
    CHECK(run.verdict.wrong == 0);
    CHECK(run.sent.empty());
  }
  SECTION("a prime number of chips") {
    CHECK(run_on_fake(*make("allreduce"), CollectiveKind::kAllreduce, 13, 77777).verdict.wrong == 0);
  }
}

TEST_CASE("ring reduce-scatter and all-gather do p-1 steps of one chunk each") {
  for (const char* collective : {"reducescatter", "allgather"}) {
    INFO(collective);
    auto kind = find_collective(collective).kind;
    auto run = run_on_fake(*make(collective), kind, 6, 6000);
    CHECK(run.verdict.wrong == 0);
    CHECK(run.steps() == 5);
    for (int r = 0; r < 6; ++r) CHECK(run.bytes_sent_by(r) == 5000);
    CHECK(run_on_fake(*make(collective), kind, 7, 100).verdict.wrong == 0);
    CHECK(run_on_fake(*make(collective), kind, 1, 100).verdict.wrong == 0);
  }
}

TEST_CASE("reductions are charged bytes / reduce_bandwidth on the receiving chip") {
  auto run = run_on_fake(*make("allreduce"), CollectiveKind::kAllreduce, 4, 4000, 1e9);
  for (int r = 0; r < 4; ++r) CHECK(run.compute_seconds[r] == Approx(3 * 1000 / 1e9));
}

TEST_CASE("ring model_s is 2(p-1)(a + ceil(n/p)/B) on a switch") {
  const double a = 2 * 500e-9, B = 100e9;
  CHECK(model_on("allreduce", "switch:8", 1 << 30) == Approx(14 * (a + (1 << 27) / B)).epsilon(1e-12));
  CHECK(model_on("allreduce", "switch:5", 1000003) == Approx(8 * (a + 200001 / B)).epsilon(1e-12));
  CHECK(model_on("reducescatter", "switch:4", 4096) == Approx(3 * (a + 1024 / B)).epsilon(1e-12));
  CHECK(model_on("allgather", "switch:3", 10) == Approx(2 * (a + 4 / B)).epsilon(1e-12));
  CHECK(model_on("allreduce", "switch:1", 1 << 20) == 0.0);
  SECTION("on a heterogeneous ring the slowest hop paces it, its latency paid once per chain") {
    // trn3 rank order crosses racks between chips 71 and 72 and between 143 and 0: forwarded 120 GB/s hops
    // of three 500 ns links and one 500 ns switch; a chip's next send starts as its previous flow ends.
    // Chunks are 7456540 or 7456541 bytes (2^30 = 144 x 7456540 + 64): the chain mixes both.
    double model = model_on("allreduce", "trn3", 1 << 30);
    CHECK(model >= 2 * 143 * 7456540 / 120e9 + 2e-6);
    CHECK(model <= 2 * 143 * 7456541 / 120e9 + 2e-6);
  }
}

TEST_CASE("with pipeline_chunks = k each ring step's chunk travels as k pieces: same steps, same bytes") {
  for (const char* collective : {"allreduce", "reducescatter", "allgather"}) {
    INFO(collective);
    auto kind = find_collective(collective).kind;
    const int steps = std::string(collective) == "allreduce" ? 14 : 7;
    auto whole = run_on_fake(*make(collective), kind, 8, 8 << 20);
    auto pieces = run_on_fake(*make(collective, 4), kind, 8, 8 << 20);
    CHECK(pieces.verdict.wrong == 0);
    CHECK(pieces.steps() == steps);
    CHECK(pieces.sent.size() == 4 * whole.sent.size());
    for (int r = 0; r < 8; ++r) CHECK(pieces.bytes_sent_by(r) == whole.bytes_sent_by(r));
    for (const auto& s : pieces.sent) CHECK(s.bytes == (1 << 20) / 4);
    for (int p : {1, 2, 3, 5, 13})
      for (std::uint64_t bytes : {1ULL, 7ULL, 1000003ULL}) {
        INFO("p=" << p << " bytes=" << bytes);
        CHECK(run_on_fake(*make(collective, 3), kind, p, bytes).verdict.wrong == 0);
      }
  }
}
