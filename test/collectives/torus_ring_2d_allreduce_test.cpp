// The 2D torus all-reduce: rings along the rows, then the columns, each step one hop on its own link.
#include <catch2/catch.hpp>

#include "cli_runner.hpp"

using ultrasim::test::expect_input_error;
using ultrasim::test::run_exact;

TEST_CASE("ring-2d on torus:XxY takes 2(X-1)(a + n/(XB)) + 2(Y-1)(a + n/(pB)), as simulated") {
  const double a = 500e-9, B = 100e9;  // torus: one 500 ns, 100 GB/s link per neighbour
  for (auto [X, Y] : {std::pair{4, 4}, std::pair{8, 4}, std::pair{2, 3}})
    for (auto [size, n] : {std::pair{"3KiB", 3072.0}, std::pair{"96MiB", 96.0 * (1 << 20)}}) {
      const double p = X * Y;
      INFO("torus:" << X << "x" << Y << " " << size);
      auto j =
          run_exact("torus:" + std::to_string(X) + "x" + std::to_string(Y), "allreduce", "ring-2d", size);
      CHECK(j["model_s"].get<double>() ==
            Approx(2 * (X - 1) * (a + n / X / B) + 2 * (Y - 1) * (a + n / p / B)).epsilon(1e-12));
    }
}

TEST_CASE("ring-2d pays 2(X+Y-2) latencies where one ring over the torus pays 2(p-1)") {
  auto time_of = [](const char* algorithm) {
    return run_exact("torus:8x4", "allreduce", algorithm, "3KiB")["time_s"].get<double>();
  };
  // 3 KiB on 32 chips: latency-bound; 20 hops of 0.5 us against at least 62.
  CHECK(time_of("ring-2d") == Approx(20 * 0.5e-6 + 14 * 384 / 100e9 + 6 * 96 / 100e9).epsilon(1e-12));
  CHECK(time_of("ring-2d") < time_of("ring") / 3);
}

TEST_CASE("ring-2d refuses a topology that is not a two-dimensional torus") {
  expect_input_error({"run", "--topology", "switch:16", "--collective", "allreduce", "--algorithm", "ring-2d",
                      "--size", "1MiB"},
                     "ring-2d runs on a two-dimensional torus (torus:XxY), not on switch:16");
  expect_input_error({"run", "--topology", "torus:2x2x4", "--collective", "allreduce", "--algorithm",
                      "ring-2d", "--size", "1MiB"},
                     "two-dimensional torus");
}
