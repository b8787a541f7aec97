// All-to-allv in the simulator, through the command line: where model_s is exact on switch:N and where it
// is only a lower bound, the metrics on the most-loaded chip, the uniform case against all-to-all, and
// one-line errors for bad matrices.
#include <catch2/catch.hpp>

#include "cli_runner.hpp"
#include "traffic_matrices.hpp"

using namespace ultrasim::test;

namespace {

const double kAlpha = 1e-6, kBandwidth = 100e9;  // switch:N defaults: two 500 ns links, 100 GB/s

std::string matrix_file(const std::string& name, const Rows& rows) {
  std::string path = temp_path(name + ".json");
  write_matrix_json(path, rows);
  return path;
}

nlohmann::json run_matrix(const std::string& topology, const std::string& algorithm,
                          const std::string& path) {
  auto j = run_json({"--topology", topology, "--collective", "alltoallv", "--algorithm", algorithm,
                     "--traffic-matrix", path});
  INFO(topology << " " << algorithm << " " << path << ": time " << j["time_s"] << " model " << j["model_s"]);
  CHECK(j["verified"] == true);
  CHECK(j["time_s"].get<double>() >= j["bound_s"].get<double>() * (1 - 1e-9));
  CHECK(j["time_s"].get<double>() >= j["model_s"].get<double>() * (1 - 1e-9));  // model_s is a lower bound
  return j;
}

void check_exact(const nlohmann::json& j) {
  double time = j["time_s"], model = j["model_s"];
  INFO(j["command"].get<std::string>() << ": time " << time << " model " << model);
  CHECK(std::abs(time - model) <= 1e-3 * model);
}

std::uint64_t max_off_diagonal(const Rows& rows) {
  std::uint64_t most = 0;
  for (std::size_t s = 0; s < rows.size(); ++s)
    for (std::size_t d = 0; d < rows.size(); ++d)
      if (s != d) most = std::max(most, rows[s][d]);
  return most;
}

}  // namespace

TEST_CASE("on switch:N both algorithms match model_s for circulant matrices (every round equal)") {
  for (int p : {2, 3, 5, 8, 16, 144}) {
    Rows rows = circulant_matrix(p, 100 + p, 8 << 20);
    std::string path = matrix_file("circulant" + std::to_string(p), rows);
    for (const char* algorithm : {"direct", "pairwise"})
      check_exact(run_matrix("switch:" + std::to_string(p), algorithm, path));
  }
}

TEST_CASE("direct all-to-allv matches model_s when the busiest link carries p-1 flows of the largest part") {
  // Every chip sends chip d the same amount (MoE dispatch with one expert popularity): the hot chip's
  // downlink has p-1 flows of the largest size, each held to B/(p-1) by it and by nothing else.
  for (int p : {3, 8, 16, 144}) {
    Rows rows = row_identical_matrix(p, 200 + p, 4 << 20, p / 2);
    auto j =
        run_matrix("switch:" + std::to_string(p), "direct", matrix_file("hot" + std::to_string(p), rows));
    check_exact(j);
    CHECK(j["model_s"].get<double>() ==
          Approx(kAlpha + (p - 1) * 2.0 * (4 << 20) / kBandwidth).epsilon(1e-12));
    CHECK(j["busiest_chip"] == p / 2);
  }
}

TEST_CASE("max-min sharing is not makespan-optimal: direct takes longer than the busiest link") {
  // Chips 0 and 2 each send 1 MB to chip 1 and 0.5 MB to chips 3 and 4. Chip 1's downlink is the
  // busiest (2 MB), but max-min gives every flow B/3 (each uplink carries three) until the 0.5 MB flows
  // end at 1.5 MB/B; the two 1 MB flows then share chip 1's downlink for their last 0.5 MB each.
  Rows rows{{0, 1000000, 0, 500000, 500000},
            {0, 0, 0, 0, 0},
            {0, 1000000, 0, 500000, 500000},
            {0, 0, 0, 0, 0},
            {0, 0, 0, 0, 0}};
  std::string path = matrix_file("maxmin", rows);
  auto direct = run_matrix("switch:5", "direct", path);
  CHECK(direct["model_s"].get<double>() == Approx(kAlpha + 2e6 / kBandwidth).epsilon(1e-12));
  CHECK(direct["time_s"].get<double>() == Approx(kAlpha + 2.5e6 / kBandwidth).epsilon(1e-9));
  // Pairwise never has two flows on one link here and reaches the busiest link's time.
  auto pairwise = run_matrix("switch:5", "pairwise", path);
  CHECK(pairwise["time_s"].get<double>() == Approx(kAlpha + 2e6 / kBandwidth).epsilon(1e-9));
}

TEST_CASE("for random uneven matrices model_s is a lower bound, and direct stays under a + (p-1) max / B") {
  // On a switch every link carries at most p-1 flows, so max-min gives each flow at least B/(p-1).
  for (int p : {3, 7, 16}) {
    Rows rows = random_matrix(p, 300 + p, 8 << 20, 30);
    std::string path = matrix_file("random" + std::to_string(p), rows);
    auto direct = run_matrix("switch:" + std::to_string(p), "direct", path);
    CHECK(direct["time_s"].get<double>() <=
          (kAlpha + (p - 1) * static_cast<double>(max_off_diagonal(rows)) / kBandwidth) * (1 + 1e-9));
    run_matrix("switch:" + std::to_string(p), "pairwise", path);
  }
}

TEST_CASE("the skewed MoE examples run verified, direct reaches the busiest link on them") {
  const std::string dir = std::string(ULTRASIM_SOURCE_DIR) + "/workloads/examples/";
  for (const auto& [topology, file] : std::vector<std::pair<std::string, std::string>>{
           {"switch:16", "moe_hot_experts_16.json"}, {"switch:8", "moe_hot_experts_8.csv"}}) {
    check_exact(run_matrix(topology, "direct", dir + file));
    run_matrix(topology, "pairwise", dir + file);
  }
}

TEST_CASE("all-to-allv metrics are measured on the most-loaded chip") {
  const std::string file = std::string(ULTRASIM_SOURCE_DIR) + "/workloads/examples/moe_hot_experts_16.json";
  auto j = run_matrix("switch:16", "direct", file);
  // Chip 3 hosts the hottest experts: it receives 328056832 bytes (its own part included); every chip sends
  // 64 MiB.
  CHECK(j["busiest_chip"] == 3);
  CHECK(j["bytes"] == 328056832);
  CHECK(j["traffic_total_bytes"] == 16ull * 64 * 1048576);
  CHECK(j["traffic_matrix"] == file);
  double time = j["time_s"];
  CHECK(j["algbw_GBps"].get<double>() == Approx(328056832 / time / 1e9).epsilon(1e-12));
  CHECK(j["busbw_GBps"].get<double>() == Approx(328056832 / time / 1e9 * 15 / 16).epsilon(1e-12));
  CHECK(j["count"] == 328056832 / 4);
}

TEST_CASE("a uniform matrix of n/p per pair gives all-to-all's time, algbw and busbw at size n") {
  struct Case {
    std::string topology;
    int p;
    std::uint64_t n;
  };
  for (const Case& c : {Case{"switch:8", 8, 8 << 20}, Case{"trn3", 144, 144ull * 7456540}}) {  // trn3: ~1 GiB
    std::string path =
        matrix_file("uniform" + std::to_string(c.p), Rows(c.p, std::vector<std::uint64_t>(c.p, c.n / c.p)));
    for (const char* algorithm : {"direct", "pairwise"}) {
      auto all = run_json({"--topology", c.topology, "--collective", "alltoall", "--algorithm", algorithm,
                           "--size", std::to_string(c.n)});
      auto from_file = run_matrix(c.topology, algorithm, path);
      auto from_size = run_json({"--topology", c.topology, "--collective", "alltoallv", "--algorithm",
                                 algorithm, "--size", std::to_string(c.n)});
      for (const auto& v : {from_file, from_size}) {
        INFO(c.topology << " " << algorithm);
        CHECK(v["bytes"] == c.n);
        CHECK(v["verified"] == true);
        for (const char* field : {"time_s", "algbw_GBps", "busbw_GBps", "model_s", "bound_s"})
          CHECK(v[field].get<double>() == Approx(all[field].get<double>()).epsilon(1e-9));
      }
      CHECK(from_size["traffic_matrix"].is_null());
    }
  }
}

TEST_CASE("all-to-allv on one chip is a local copy: time 0, no bandwidth") {
  auto j = run_matrix("switch:1", "direct", matrix_file("one", Rows{{4096}}));
  CHECK(j["time_s"] == 0.0);
  CHECK(j["bytes"] == 4096);
  CHECK(j["algbw_GBps"].is_null());
  CHECK(j["bound_s"] == 0.0);
}

TEST_CASE("auto ranks the two all-to-allv algorithms by model_s and list shows them") {
  const std::string file = std::string(ULTRASIM_SOURCE_DIR) + "/workloads/examples/moe_hot_experts_16.json";
  auto j = run_matrix("switch:16", "auto", file);
  CHECK(j["requested_algorithm"] == "auto");
  CHECK(j["auto_ranking"].size() == 2);
  CHECK(j["algorithm"] == j["auto_ranking"][0]["algorithm"]);
  CliResult list = run_cli({"list"});
  CHECK_THAT(list.out, Catch::Contains("  alltoallv ") && Catch::Contains("alltoallv direct") &&
                           Catch::Contains("alltoallv pairwise"));
}

TEST_CASE("bad traffic matrices and option mixes are one line on stderr and exit status 2") {
  auto run = [](const std::string& path, const std::string& topology = "switch:3") {
    return std::vector<std::string>{"run",          "--topology",       topology,
                                    "--collective", "alltoallv",        "--algorithm",
                                    "direct",       "--traffic-matrix", path};
  };
  auto file = [](const std::string& name, const std::string& text) {
    std::string path = temp_path(name);
    std::ofstream(path) << text;
    return path;
  };
  expect_input_error(run("/nonexistent/m.json"), "cannot read traffic matrix '/nonexistent/m.json'");
  expect_input_error(run(file("ragged.json", "[[0,1,2],[1,0],[2,1,0]]")),
                     "row 1 has 2 entries but row 0 has 3");
  expect_input_error(run(file("nonsquare.csv", "0,1,2\n1,0,2\n")), "expected a square");
  expect_input_error(run(file("wrongp.csv", "0,1\n1,0\n")), "is 2 x 2 but topology 'switch:3' has 3 chips");
  expect_input_error(run(file("negative.json", "[[0,1,2],[1,0,-2],[2,1,0]]")),
                     "row 1, column 2: -2 is negative");
  expect_input_error(run(file("fraction.csv", "0,1,2\n1,0,2.5\n2,1,0\n")),
                     "line 2, field 3: invalid size '2.5'");
  expect_input_error(run(file("garbage.csv", "0,1,2\n1,zero,2\n2,1,0\n")),
                     "line 2, field 2: invalid size 'zero'");
  expect_input_error(run(file("broken.json", "{\"bytes\": [[0,1,2]")), "invalid JSON");
  std::string ok = file("ok.csv", "0,1,2\n1,0,2\n2,1,0\n");
  auto with = [&](std::vector<std::string> extra) {
    auto args = run(ok);
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  expect_input_error(with({"--size", "1MiB"}), "give --size or --traffic-matrix, not both");
  expect_input_error({"run", "--topology", "switch:3", "--collective", "alltoallv", "--algorithm", "direct"},
                     "alltoallv needs --traffic-matrix FILE");
  expect_input_error({"run", "--topology", "switch:3", "--collective", "allreduce", "--algorithm", "ring",
                      "--traffic-matrix", ok},
                     "--traffic-matrix applies to alltoallv only");
  expect_input_error({"run", "--topology", "switch:3", "--collective", "allreduce", "--algorithm", "ring"},
                     "--size is required");
  expect_input_error(
      {"run", "--topology", "switch:3", "--collective", "alltoallv", "--algorithm", "dirct", "--size", "1"},
      "did you mean 'direct'");
}
