// workloads/moe/moe.hpp: the router, the capacity limit, de-duplication, the roofline and the energy and cost
// formulas, each against a value worked out by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <set>

#include "collectives/traffic_matrix.hpp"
#include "topology/base/errors.hpp"
#include "workloads/moe/moe.hpp"
#include "workloads/workload_metrics.hpp"

using namespace ultrasim;

namespace {

MoeConfig layer(int experts, int k, std::uint64_t tokens, std::uint64_t hidden) {
  MoeConfig c;
  c.experts = experts, c.top_k = k, c.tokens_per_chip = tokens, c.hidden = hidden;
  return c;
}

std::uint64_t busiest_received(const MoeRouting& r) {
  std::uint64_t most = 0;
  for (int d = 0; d < r.p; ++d) {
    std::uint64_t in = 0;
    for (int s = 0; s < r.p; ++s) in += r.dispatch_tokens[s][d];
    most = std::max(most, in);
  }
  return most;
}

}  // namespace

TEST_CASE("experts are placed in contiguous blocks, the first E mod p chips holding one more") {
  CHECK(place_experts(8, 4) == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(place_experts(6, 4) == std::vector<int>{0, 0, 1, 1, 2, 3});
  CHECK(place_experts(2, 4) == std::vector<int>{0, 1});
}

TEST_CASE("uniform routing without capacity or de-duplication is all-to-all's traffic matrix") {
  MoeConfig c = layer(16, 2, 1024, 512);
  c.dedup = false;
  const MoeRouting r = route_tokens(c, 8, 0);
  // Each chip sends N k / p = 256 tokens of H float8 bytes to every chip: all-to-all of N k H = 1 MiB.
  const TrafficMatrix d = dispatch_matrix(r, 512, 1), a2a = TrafficMatrix::uniform(1024 * 2 * 512, 8);
  for (int s = 0; s < 8; ++s)
    for (int t = 0; t < 8; ++t) CHECK(d.bytes(s, t) == a2a.bytes(s, t));
  CHECK(r.dropped == 0);
  CHECK(r.expert_load == std::vector<std::uint64_t>(16, 8 * 1024 * 2 / 16));
  // The combine is its transpose at bfloat16.
  const TrafficMatrix back = combine_matrix(r, 512, 2);
  CHECK(back.bytes(3, 5) == 2 * d.bytes(5, 3));
}

TEST_CASE("uniform de-duplication sends a token once per chip: the hypergeometric count") {
  // 16 experts, 2 per chip, top-2: a token has some expert on a given chip with probability
  // 1 - C(14,2)/C(16,2) = 29/120, so 1024 x 29/120 = 247.47 -> 247 tokens per pair.
  const MoeRouting r = route_tokens(layer(16, 2, 1024, 512), 8, 0);
  for (int s = 0; s < 8; ++s)
    for (int t = 0; t < 8; ++t) CHECK(r.dispatch_tokens[s][t] == 247);
  // top-1: never two experts of one token on a chip, nothing to save.
  const MoeRouting one = route_tokens(layer(16, 1, 1024, 512), 8, 0);
  CHECK(one.dispatch_tokens[0][1] == 128);
}

TEST_CASE("Zipf skew raises the busiest chip's received tokens monotonically with s") {
  std::uint64_t previous = 0;
  for (double s : {0.0, 0.5, 1.0, 1.5}) {
    MoeConfig c = layer(16, 2, 1024, 512);
    c.zipf = s;
    const std::uint64_t busiest = busiest_received(route_tokens(c, 8, 0));
    CHECK(busiest > previous);
    previous = busiest;
  }
}

TEST_CASE("capacity drops are exact in a hand-checked case") {
  // 4 chips, 4 experts (one each), top-1, 8 tokens per chip, loads 4:2:1:1 -> 16, 8, 4, 4 copies.
  // Capacity factor 1: ceil(1 x 32 x 1 / 4) = 8 per expert, so expert 0 drops 8, 2 from each chip.
  MoeConfig c = layer(4, 1, 8, 64);
  c.expert_load = {4, 2, 1, 1};
  c.capacity_factor = 1.0;
  MoeRouting r = route_tokens(c, 4, 0);
  CHECK(r.capacity == 8u);
  CHECK(r.routed == 32);
  CHECK(r.dropped == 8);
  CHECK(r.expert_load == std::vector<std::uint64_t>{8, 8, 4, 4});
  for (int s = 0; s < 4; ++s) CHECK(r.copies[s][0] == 2);
  // 1.25: capacity ceil(10) = 10, expert 0 drops 6.
  c.capacity_factor = 1.25;
  CHECK(route_tokens(c, 4, 0).dropped == 6);
  // random: all tokens want expert 0; arrivals go token by token across chips, so with capacity 8 the
  // first two tokens of every chip get through and 24 copies are dropped.
  c.router = "random";
  c.expert_load = {1, 0, 0, 0};
  c.capacity_factor = 1.0;
  r = route_tokens(c, 4, 0);
  CHECK(r.dropped == 24);
  for (int s = 0; s < 4; ++s) CHECK(r.copies[s][0] == 2);
}

TEST_CASE("random routing draws k distinct experts per token, the same for the same seed") {
  MoeConfig c = layer(16, 4, 512, 64);
  c.router = "random";
  c.zipf = 1.0;
  const MoeRouting a = route_tokens(c, 8, 0), b = route_tokens(c, 8, 0), other = route_tokens(c, 8, 1);
  CHECK(a.copies == b.copies);
  CHECK(a.copies != other.copies);
  for (int s = 0; s < 8; ++s) {
    std::uint64_t copies = 0, sent = 0;
    for (int e = 0; e < 16; ++e) copies += a.copies[s][e];
    for (int t = 0; t < 8; ++t) sent += a.dispatch_tokens[s][t];
    CHECK(copies == 512 * 4);
    CHECK(sent <= copies);   // de-duplicated
    CHECK(sent >= 512 * 2);  // 4 picks over 2 experts per chip: at least 2 chips per token
  }
}

TEST_CASE("expert compute is the roofline: memory-bound below the ridge, compute-bound above") {
  ParamSet params(chip_params());
  const double peak = 2.517e15 * 0.6, hbm = 4.9e12;
  MoeConfig c = layer(4, 1, 1, 1024);  // F = H = 1024, weights 3 H F float8 = 3 MiB per expert
  MoeRouting r = route_tokens(c, 4, 0);
  REQUIRE(r.expert_load[0] == 1);
  ExpertCompute small = expert_compute(r, 0, c, params, 1);
  const double weights = 3.0 * 1024 * 1024;
  CHECK(small.flops == 6.0 * 1024 * 1024);
  CHECK(small.bytes == weights + 1024.0 * 3);  // one token in (float8) and out (bfloat16)
  CHECK(small.memory_bound);
  CHECK(small.seconds == Approx(small.bytes / hbm).epsilon(1e-12));
  c.tokens_per_chip = 100000;
  r = route_tokens(c, 4, 0);
  ExpertCompute big = expert_compute(r, 0, c, params, 1);
  CHECK(big.flops == 6.0 * 1024 * 1024 * 100000);
  CHECK(!big.memory_bound);
  CHECK(big.seconds == Approx(big.flops / peak).epsilon(1e-12));
  // Four micro-chunks: a quarter of the work each, the weights read each time.
  ExpertCompute chunk = expert_compute(r, 0, c, params, 4);
  CHECK(chunk.flops == big.flops / 4);
  CHECK(chunk.bytes == Approx(weights + (big.bytes - weights) / 4).epsilon(1e-12));
}

TEST_CASE("energy and cost are their formulas") {
  ParamSet params(chip_params());
  params.apply({{"chip_power", "500"},
                {"switch_power", "50"},
                {"link_energy", "4"},
                {"ultraserver_price_per_hour", "288"}});
  // 8 chips x 500 W x 1 ms + 2 switches x 50 W x 1 ms + 4 pJ x 8 bits x 1e9 bytes
  CHECK(workload_energy_j(params, 8, 2, 1e-3, 1e9) == Approx(4.0 + 0.1 + 0.032).epsilon(1e-12));
  // 288 USD/h for 144 chips: 2 USD per chip-hour; 72 chips for an hour = 144 USD.
  CHECK(workload_cost_usd(params, 72, 3600) == Approx(144).epsilon(1e-12));
}

TEST_CASE("percentiles are nearest-rank") {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  CHECK(percentile(v, 0.5) == 50);
  CHECK(percentile(v, 0.99) == 99);
  CHECK(percentile({3.0}, 0.99) == 3);
}

TEST_CASE("a measured expert load reads from JSON or CSV, bad ones are named") {
  const std::string json = "/tmp/ultrasim-moe-load.json", csv = "/tmp/ultrasim-moe-load.csv";
  std::ofstream(json) << "[4, 2, 1, 1]";
  std::ofstream(csv) << "4,2\n1, 1\n";
  CHECK(read_expert_load(json) == std::vector<double>{4, 2, 1, 1});
  CHECK(read_expert_load(csv) == std::vector<double>{4, 2, 1, 1});
  std::ofstream(csv) << "4,x\n";
  CHECK_THROWS_WITH(read_expert_load(csv), Catch::Contains("'x' is not a number"));
  std::ofstream(csv) << "0,0\n";
  CHECK_THROWS_WITH(read_expert_load(csv), Catch::Contains("no positive load"));
  MoeConfig c = layer(8, 2, 16, 64);
  c.expert_load = {1, 2};
  c.expert_load_source = csv;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("expected one per expert (8)"));
}

TEST_CASE("workload files name the field at fault") {
  auto error_of = [](const nlohmann::json& w) {
    try {
      moe_config_from_json(w, "w.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const nlohmann::json good{
      {"workload", "moe"}, {"experts", 8}, {"top_k", 2}, {"tokens_per_chip", 16}, {"hidden", 64}};
  CHECK(error_of(good) == "no error");
  auto with = [&](const char* key, const nlohmann::json& value) {
    nlohmann::json w = good;
    w[key] = value;
    return error_of(w);
  };
  CHECK_THAT(with("experts", -1),
             Catch::Contains("field 'experts' must be an integer between 1 and 1048576, not -1"));
  CHECK_THAT(with("top_k", 9), Catch::Contains("--top-k 9 must be between 1 and the experts (8)"));
  CHECK_THAT(with("capacity_factor", "lots"), Catch::Contains("field 'capacity_factor'"));
  CHECK_THAT(with("router", "greedy"),
             Catch::Contains("field 'router': unknown value 'greedy'; known: uniform, random"));
  CHECK_THAT(with("topk", 2), Catch::Contains("unknown field 'topk'"));
  nlohmann::json missing = good;
  missing.erase("hidden");
  CHECK_THAT(error_of(missing), Catch::Contains("missing field 'hidden'"));
}

TEST_CASE("a hot expert's replica goes to the least-loaded chip and takes half its copies") {
  // Loads 4:2:1:1 on chips 0-3 (one expert each): chips 2 and 3 tie lowest, so expert 0's replica goes
  // to chip 2; each sender's 4 copies of expert 0 split 2 and 2.
  MoeConfig c = layer(4, 1, 8, 64);
  c.expert_load = {4, 2, 1, 1};
  c.replicate_hot = 1;
  const MoeRouting r = route_tokens(c, 4, 0);
  CHECK(r.instance_chip == std::vector<int>{0, 1, 2, 3, 2});
  CHECK(r.instance_expert == std::vector<int>{0, 1, 2, 3, 0});
  CHECK(r.instance_load == std::vector<std::uint64_t>{8, 8, 4, 4, 8});
  CHECK(r.copies_on(0) == 8);
  CHECK(r.copies_on(2) == 12);
  CHECK(r.expert_load[0] == 16);  // the expert's copies, both homes together
  // Random routing alternates a token between the two homes.
  c.router = "random";
  c.expert_load = {1, 0, 0, 0};
  const MoeRouting drawn = route_tokens(c, 4, 0);
  CHECK(drawn.instance_load[0] == 16);
  CHECK(drawn.instance_load[4] == 16);
  CHECK(drawn.instance_chip[4] == 1);  // all load on chip 0: chip 1 is the first of the idle ones
}

TEST_CASE("node-limited routing sends each token to experts on at most M nodes, and only the random router") {
  // 16 chips in 4 nodes of 4, 64 experts (4 per chip), top-8, one token per chip: each sender's row of
  // the dispatch is its one token's destination chips.
  MoeConfig c = layer(64, 8, 1, 16);
  c.router = "random";
  for (const int m : {1, 2, 3}) {
    c.max_nodes = m, c.node_chips = 4;
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      c.seed = seed;
      const MoeRouting r = route_tokens(c, 16, 0);
      for (int s = 0; s < 16; ++s) {
        std::set<int> nodes;
        std::uint64_t copies = 0;
        for (int d = 0; d < 16; ++d)
          if (r.dispatch_tokens[s][d] > 0) nodes.insert(d / 4);
        for (int e = 0; e < 64; ++e) copies += r.copies[s][e];
        CHECK(static_cast<int>(nodes.size()) <= m);
        CHECK(copies == 8);  // still top-8: 16 experts per node are enough
      }
    }
  }
  // Without the limit a token's eight experts spread over more nodes.
  c.max_nodes = 0;
  int spread = 0;
  const MoeRouting r = route_tokens(c, 16, 0);
  for (int s = 0; s < 16; ++s) {
    std::set<int> nodes;
    for (int d = 0; d < 16; ++d)
      if (r.dispatch_tokens[s][d] > 0) nodes.insert(d / 4);
    spread = std::max(spread, static_cast<int>(nodes.size()));
  }
  CHECK(spread > 2);
  c.max_nodes = 2, c.router = "uniform";
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("needs --router random"));
  c.router = "random", c.node_chips = 0;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("needs --node-chips"));
}
