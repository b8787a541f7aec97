// The simulator agrees with the closed-form α-β cost within 0.1 % wherever theory is exact:
// ring collectives on a switch and on a ring, direct all-to-all on a switch.
#include <cstring>

#include <catch2/catch.hpp>

#include "cli_runner.hpp"

using ultrasim::test::expect_input_error;
using ultrasim::test::grid_chips;
using ultrasim::test::grid_sizes;
using ultrasim::test::run_exact;
using ultrasim::test::run_json;

TEST_CASE("ring collectives match 2(p-1)(a + n/pB) and (p-1)(a + n/pB) on switch:N and ring:N") {
  auto p = GENERATE(2, 3, 5, 8, 16, 144);
  auto size = GENERATE(
      from_range(grid_sizes({"1KiB", "1048579", "64MiB", "1GiB"}, {"1048579"})));  // 1048579: not divisible
  auto collective = GENERATE(as<std::string>{}, "allreduce", "allgather", "reducescatter");
  for (const char* shape : {"switch:", "ring:"})
    run_exact(shape + std::to_string(p), collective, "ring", size);
}

TEST_CASE("on trn3 the ring meets no contention, so its step-by-step alpha-beta model is exact too") {
  auto size = GENERATE(from_range(grid_sizes({"1MiB", "1GiB"}, {"1MiB"})));
  for (const char* collective : {"allreduce", "allgather", "reducescatter", "alltoall"})
    run_exact("trn3", collective, "ring", size);
}

TEST_CASE("pipelined rings (pipeline_chunks = 4) stay exact on switch:8 and ring:8, reductions included") {
  for (const char* shape : {"switch:8", "ring:8"})
    for (const char* collective : {"allreduce", "allgather", "reducescatter"})
      for (const std::string& size : grid_sizes({"1KiB", "1048579", "64MiB"}, {"1048579"}))
        for (const char* chunks : {"pipeline_chunks=1", "pipeline_chunks=4"}) {
          run_exact(shape, collective, "ring", size, {chunks});
          run_exact(shape, collective, "ring", size, {chunks, "reduce_bandwidth=50GBps"});
        }
}

TEST_CASE("ring pieces hide the reduction and a, at the price of a fill, the p-1 hop latency stays") {
  const double a = 1e-6, B = 100e9, R = 50e9;  // switch:8: two 500 ns links per route
  auto time_of = [](const char* collective, const char* size, int chunks) {
    auto j = run_exact("switch:8", collective, "ring", size,
                       {"pipeline_chunks=" + std::to_string(chunks), "reduce_bandwidth=50GBps"});
    CHECK(j["parameters"]["pipeline_chunks"] == chunks);
    return j["model_s"].get<double>();
  };
  // 64 MiB reduce-scatter, c = 8 MiB per chunk: whole chunks pay a, sending and adding one after another;
  // k pieces overlap them, so adding paces it, after a fill of k-1 pieces sent before any arrived.
  const double c = 8 << 20;
  const double whole = time_of("reducescatter", "64MiB", 1), four = time_of("reducescatter", "64MiB", 4),
               sixteen = time_of("reducescatter", "64MiB", 16);
  CHECK(whole == Approx(7 * (a + c / B + c / R)).epsilon(1e-12));        // 1768.6 us
  CHECK(four == Approx(3 * c / 4 / B + 7 * c / R).epsilon(1e-12));       // 1237.3 us
  CHECK(sixteen == Approx(15 * c / 16 / B + 7 * c / R).epsilon(1e-12));  // 1253.0 us: a longer fill
  // The all-reduce gains as much in its reduce-scatter half: 2362.8 us -> 1762.6 us.
  CHECK(time_of("allreduce", "64MiB", 4) < 0.75 * time_of("allreduce", "64MiB", 1));
  // 1 KiB: 32-byte pieces cannot hide a; both pay 2(p-1) a, pieces only save bandwidth time.
  CHECK(time_of("allreduce", "1KiB", 1) == Approx(14 * (a + 128 / B) + 7 * 128 / R).epsilon(1e-12));
  CHECK(time_of("allreduce", "1KiB", 4) >= 14 * a);
}

TEST_CASE("sizes smaller than the chip count still agree (empty chunks cost latency only)") {
  run_exact("switch:144", "allreduce", "ring", "100");
  run_exact("ring:16", "allgather", "ring", "7");
}

TEST_CASE("direct all-to-all matches a + (p-1) ceil(n/p) / B on switch:N") {
  auto p = GENERATE(2, 3, 5, 8, 16, 144);
  auto size = GENERATE(from_range(grid_sizes({"1KiB", "1048579", "64MiB", "1GiB"}, {"1048579"})));
  run_exact("switch:" + std::to_string(p), "alltoall", "direct", size);
}

TEST_CASE("agreement holds with switch latency and per-transfer overhead") {
  auto j = run_json({"--topology", "switch:8", "--collective", "allreduce", "--algorithm", "ring", "--size",
                     "1GiB", "--set", "link_latency=1us", "--set", "switch_latency=300ns", "--set",
                     "transfer_overhead=2us"});
  double expected = 14 * (2e-6 + 300e-9 + 2e-6 + (1 << 27) / 100e9);
  CHECK(j["time_s"].get<double>() == Approx(expected).epsilon(1e-9));
  CHECK(j["model_s"].get<double>() == Approx(expected).epsilon(1e-12));
}

TEST_CASE("reduction cost is charged once per reduce-scatter step") {
  auto j = run_json({"--topology", "switch:4", "--collective", "allreduce", "--algorithm", "ring", "--size",
                     "4MB", "--set", "reduce_bandwidth=50GBps"});
  double step = 2 * 500e-9 + 1e6 / 100e9;
  CHECK(j["time_s"].get<double>() == Approx(3 * (step + 1e6 / 50e9) + 3 * step).epsilon(1e-9));
}

TEST_CASE(
    "catalogue algorithms match model_s within 0.1 % where their headers say they are contention-free") {
  struct Case {
    const char* collective;
    const char* algorithm;
    const char* shape;
    std::vector<int> chips;
  };
  const std::vector<int> any{2, 3, 5, 8, 16, 144};
  for (const Case& c :
       std::vector<Case>{{"allreduce", "bidir-ring", "ring:", {3, 5, 8, 16, 144}},
                         {"allreduce", "recursive-doubling", "switch:", {2, 4, 8, 16, 128}},
                         {"allreduce", "rabenseifner", "switch:", {2, 4, 8, 16, 128}},
                         {"allgather", "bruck", "switch:", any},
                         {"allgather", "recursive-doubling", "switch:", {2, 4, 8, 16, 128}},
                         {"reducescatter", "recursive-halving", "switch:", {2, 4, 8, 16, 128}},
                         {"allreduce", "one-shot", "switch:", any},
                         {"allreduce", "two-shot", "switch:", any},
                         {"allreduce", "double-binary-tree", "switch:", {2}},
                         {"allreduce", "double-binary-tree", "ring:", {2}},
                         {"allgather", "direct", "switch:", any},
                         {"reducescatter", "direct", "switch:", any},
                         {"alltoall", "pairwise", "switch:", any},
                         {"alltoall", "bruck", "switch:", any},
                         {"alltoall", "ring", "switch:", any},
                         {"alltoall", "ring", "ring:", {3, 5, 8, 16, 144}},
                         {"broadcast", "binomial-tree", "switch:", any},
                         {"reduce", "binomial-tree", "switch:", {2, 4, 8, 16, 128}},
                         {"broadcast", "chain", "switch:", any},
                         {"broadcast", "chain", "ring:", {3, 5, 8, 16, 144}},
                         {"reduce", "chain", "switch:", any},
                         {"reduce", "chain", "ring:", {3, 5, 8, 16, 144}}}) {
    for (int p : grid_chips(c.chips))
      for (const std::string& size : grid_sizes({"1KiB", "1048579", "64MiB"}, {"1048579"}))
        run_exact(c.shape + std::to_string(p), c.collective, c.algorithm, size);
  }
}

TEST_CASE("hierarchical collectives with equal groups on a switch match model_s within 0.1 %") {
  for (const char* collective : {"allreduce", "allgather", "reducescatter"})
    for (const auto& [topology, groups] : std::vector<std::pair<std::string, std::string>>{
             {"switch:16", "4"}, {"switch:12", "3"}, {"switch:144", "12"}})
      for (const char* phases : {"ring ring", "direct direct", "ring direct"})
        for (const std::string& size : grid_sizes({"1KiB", "1048579", "64MiB"}, {"1048579"})) {
          std::string inner(phases, std::strchr(phases, ' ')), outer(std::strchr(phases, ' ') + 1);
          auto j = run_json({"--topology", topology, "--collective", collective, "--algorithm",
                             "hierarchical", "--size", size, "--set", "groups=" + groups, "--set",
                             "inner=" + inner, "--set", "outer=" + outer});
          INFO(topology << " " << collective << " groups=" << groups << " " << phases << " " << size);
          CHECK(j["verified"] == true);
          CHECK(std::abs(j["time_s"].get<double>() - j["model_s"].get<double>()) <=
                1e-3 * j["model_s"].get<double>());
        }
}

TEST_CASE("hierarchical all-to-all with equal groups on a switch: 2a + ((g-1)G + (G-1)g) c/B, exact") {
  for (const auto& [topology, groups] : std::vector<std::pair<std::string, std::string>>{
           {"switch:16", "4"}, {"switch:12", "3"}, {"switch:144", "12"}})
    for (const std::string& size : grid_sizes({"1KiB", "1048579", "64MiB"}, {"1048579"})) {
      auto j = run_json({"--topology", topology, "--collective", "alltoall", "--algorithm", "hierarchical",
                         "--size", size, "--set", "groups=" + groups});
      INFO(topology << " " << size);
      CHECK(j["verified"] == true);
      CHECK(std::abs(j["time_s"].get<double>() - j["model_s"].get<double>()) <=
            1e-3 * j["model_s"].get<double>());
    }
  // By hand on switch:16, 4 groups of 4, 64 MiB: c = 4 MiB; 12 parts out in each step.
  auto j = run_json({"--topology", "switch:16", "--collective", "alltoall", "--algorithm", "hierarchical",
                     "--size", "64MiB", "--set", "groups=4"});
  CHECK(j["time_s"].get<double>() == Approx(2 * 1e-6 + 24 * 4194304 / 100e9).epsilon(1e-9));
}

TEST_CASE("in-switch all-reduce on switch:N: 2a + n/B + (n/D)(1/B + 1/R) with D slices, exact") {
  for (int p : {2, 3, 8, 16, 144})
    for (const char* depth : {"1", "16"})
      for (const std::string& size : grid_sizes({"1KiB", "1048579", "64MiB"}, {"1048579"})) {
        auto j = run_json({"--topology", "switch:" + std::to_string(p), "--collective", "allreduce",
                           "--algorithm", "switch-reduce", "--size", size, "--set", "switch_reduction=true",
                           "--set", std::string("pipeline_chunks=") + depth});
        INFO("p=" << p << " D=" << depth << " " << size);
        CHECK(j["verified"] == true);
        CHECK(std::abs(j["time_s"].get<double>() - j["model_s"].get<double>()) <=
              1e-3 * j["model_s"].get<double>());
        CHECK(j["time_s"].get<double>() >= j["bound_s"].get<double>() * (1 - 1e-9));  // n up and n down
      }
  // By hand: 64 MiB in 16 slices of 4 MiB on 100 GB/s links of 500 ns, the engine at 50 GB/s.
  auto j = run_json({"--topology", "switch:8", "--collective", "allreduce", "--algorithm", "switch-reduce",
                     "--size", "64MiB", "--set", "switch_reduction=true", "--set",
                     "switch_reduce_bandwidth=50GBps"});
  const double n = 67108864, b = n / 16;
  // Uploads take b/100G each, the engine 2 b/100G each, so the engine paces: it ends at a + b/B + 16 b/R.
  double expected = 500e-9 + b / 100e9 + 16 * b / 50e9 + b / 100e9 + 500e-9;
  CHECK(j["time_s"].get<double>() == Approx(expected).epsilon(1e-9));
  CHECK(j["model_s"].get<double>() == Approx(expected).epsilon(1e-9));
}

TEST_CASE("a topology that does not declare switch_reduction has no reducing switches, for bound and run") {
  // trn2 declares no switch_reduction: switch-reduce is refused, and the all-reduce bound is the one
  // without in-network reduction, as on switch:8 with switch_reduction=false: 2(p-1)/p n over injection.
  expect_input_error({"run", "--topology", "trn2", "--collective", "allreduce", "--algorithm",
                      "switch-reduce", "--size", "1MiB"},
                     "topology trn2 has none (no switch_reduction parameter)");
  expect_input_error({"run", "--topology", "switch:8", "--collective", "allreduce", "--algorithm",
                      "switch-reduce", "--size", "1MiB"},
                     "has switch_reduction=false (set switch_reduction=true for a what-if)");
  auto plain = run_json(
      {"--topology", "switch:8", "--collective", "allreduce", "--algorithm", "ring", "--size", "64MiB"});
  auto reducing = run_json({"--topology", "switch:8", "--collective", "allreduce", "--algorithm", "ring",
                            "--size", "64MiB", "--set", "switch_reduction=true"});
  const double n = 67108864;
  CHECK(plain["bound_s"].get<double>() == Approx(2.0 * 7 / 8 * n / 100e9 + 1e-6).epsilon(1e-9));
  CHECK(reducing["bound_s"].get<double>() == Approx(n / 100e9 + 1e-6).epsilon(1e-9));
}

TEST_CASE("with folded chips, recursive doubling contends and model_s is a lower bound") {
  for (int p : {3, 6, 144}) {
    auto j = run_json({"--topology", "switch:" + std::to_string(p), "--collective", "allreduce",
                       "--algorithm", "recursive-doubling", "--size", "64MiB"});
    INFO("p=" << p);
    CHECK(j["verified"] == true);
    CHECK(j["time_s"].get<double>() >= j["model_s"].get<double>() * (1 - 1e-9));
  }
}

TEST_CASE(
    "the double binary tree's children and parents do not wait for each other: model_s is a lower bound") {
  // On 2 chips each chip has one peer: it sends its half up, then the summed other half down, n/B in
  // all, and the peer's first chunk arrives while it still sends: n/B + a.
  auto two = run_json({"--topology", "switch:2", "--collective", "allreduce", "--algorithm",
                       "double-binary-tree", "--size", "64MiB"});
  CHECK(two["time_s"].get<double>() == Approx(67108864 / 100e9 + 1e-6).epsilon(1e-9));
  // From 3 chips on, a chip's two children (reduce) or two parents (broadcast) can send to it at once.
  for (const char* topology : {"switch:3", "switch:8", "switch:144", "ring:8", "trn3"}) {
    auto j = run_json({"--topology", topology, "--collective", "allreduce", "--algorithm",
                       "double-binary-tree", "--size", "64MiB"});
    INFO(topology << ": time " << j["time_s"] << " model " << j["model_s"]);
    CHECK(j["verified"] == true);
    CHECK(j["time_s"].get<double>() >= j["model_s"].get<double>() * (1 - 1e-9));
  }
}

TEST_CASE("on trn3 every all-reduce and all-to-all algorithm runs verified at 1 MiB and 1 GiB") {
  for (const std::string& size : grid_sizes({"1MiB", "1GiB"}, {"1MiB"}))
    for (const auto& [collective, algorithm] :
         std::vector<std::pair<std::string, std::string>>{{"allreduce", "ring"},
                                                          {"allreduce", "bidir-ring"},
                                                          {"allreduce", "recursive-doubling"},
                                                          {"allreduce", "rabenseifner"},
                                                          {"allreduce", "one-shot"},
                                                          {"allreduce", "two-shot"},
                                                          {"allreduce", "hierarchical"},
                                                          {"allreduce", "double-binary-tree"},
                                                          {"alltoall", "direct"},
                                                          {"alltoall", "pairwise"},
                                                          {"alltoall", "bruck"},
                                                          {"alltoall", "ring"},
                                                          {"alltoall", "hierarchical"},

                                                          {"alltoallv", "direct"},
                                                          {"alltoallv", "pairwise"}}) {
      auto j = run_json(
          {"--topology", "trn3", "--collective", collective, "--algorithm", algorithm, "--size", size});
      INFO(collective << " " << algorithm << " " << size);
      CHECK(j["verified"] == true);
      CHECK(j["time_s"].get<double>() >= j["bound_s"].get<double>() * (1 - 1e-9));
    }
}

TEST_CASE("in-switch reduction is a what-if on trn3: rack switches reduce, racks exchange over chip links") {
  for (const std::string& size : grid_sizes({"1MiB", "1GiB"}, {"1MiB"})) {
    auto j = run_json({"--topology", "trn3", "--collective", "allreduce", "--algorithm", "switch-reduce",
                       "--size", size, "--set", "switch_reduction=true"});
    INFO(size);
    CHECK(j["verified"] == true);
    CHECK(j["time_s"].get<double>() >= j["bound_s"].get<double>() * (1 - 1e-9));
    // The racks' in-switch phases and the cross-rack rings meet no contention: the model is exact here too.
    CHECK(std::abs(j["time_s"].get<double>() - j["model_s"].get<double>()) <=
          1e-3 * j["model_s"].get<double>());
  }
}

TEST_CASE("the chain's pipeline depth: (p-1)(a + c/B) + (C-1) c/B with c = ceil(n/C)") {
  for (int chunks : {1, 4, 64}) {
    auto j = run_json({"--topology", "switch:8", "--collective", "broadcast", "--algorithm", "chain",
                       "--size", "64MiB", "--set", "pipeline_chunks=" + std::to_string(chunks)});
    double c = std::ceil(67108864.0 / chunks) / 100e9;
    double expected = 7 * (1e-6 + c) + (chunks - 1) * c;
    INFO("chunks=" << chunks);
    CHECK(j["time_s"].get<double>() == Approx(expected).epsilon(1e-9));
    CHECK(j["parameters"]["pipeline_chunks"] == chunks);
  }
}
