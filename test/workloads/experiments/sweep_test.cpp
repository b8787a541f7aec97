// The sweep grid: sizes, seeds, the order of points, which --set applies where, and bad specs.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "topology/base/errors.hpp"
#include "workloads/experiments/sweep.hpp"

using namespace ultrasim;

TEST_CASE("sizes: FROM:TO:xF doubles like nccl-tests' -b -e -f, +STEP adds, commas list") {
  auto sizes = parse_sizes("1KiB:4GiB:x2");
  CHECK(sizes.size() == 23);
  CHECK(sizes.front() == 1024);
  CHECK(sizes.back() == 4ull << 30);
  CHECK(parse_sizes("1KiB:5KiB:x4") == std::vector<std::uint64_t>{1024, 4096});
  CHECK(parse_sizes("0:3MiB:+1MiB") == std::vector<std::uint64_t>{0, 1 << 20, 2 << 20, 3 << 20});
  CHECK(parse_sizes("1KiB,1000") == std::vector<std::uint64_t>{1024, 1000});
  CHECK(parse_seeds("0:3") == std::vector<std::uint64_t>{0, 1, 2});
  CHECK(parse_seeds("7,9") == std::vector<std::uint64_t>{7, 9});
  CHECK_THROWS_AS(parse_sizes("1MiB:1KiB:x2"), InputError);
  CHECK_THROWS_AS(parse_sizes("1KiB:1MiB:x1"), InputError);
  CHECK_THROWS_AS(parse_sizes("1KiB:1MiB"), InputError);
  CHECK_THROWS_AS(parse_seeds("a"), InputError);
}

TEST_CASE("points nest topology, collective, algorithm, size, parameter values, seed, in that order") {
  SweepSpec spec;
  spec.topologies = {"switch:4", "ring:4"};
  spec.collectives = {"allreduce", "alltoall"};
  spec.algorithms = {"ring", "direct"};  // ring: all-reduce and all-to-all; direct: all-to-all only
  spec.sizes = {1024, 2048};
  spec.seeds = {0, 1};
  auto grid = expand(spec);
  REQUIRE(grid.size() == 2 * (1 + 2) * 2 * 2);
  for (std::size_t i = 0; i < grid.size(); ++i) CHECK(grid[i].id == static_cast<int>(i));
  CHECK(grid[0].topology == "switch:4");
  CHECK(grid[0].algorithm == "ring");
  CHECK(grid[1].seed == 1);
  CHECK(grid[2].bytes == 2048);
  CHECK(grid[4].collective == "alltoall");
  CHECK(grid[8].algorithm == "direct");
  CHECK(grid[12].topology == "ring:4");
  CHECK(grid[3].run_args() == std::vector<std::string>{"run", "--topology", "switch:4", "--collective",
                                                       "allreduce", "--algorithm", "ring", "--size", "2048",
                                                       "--seed", "1", "--format", "json"});
}

TEST_CASE("a --set applies only where a topology, the model or the algorithm declares it") {
  SweepSpec spec;
  spec.topologies = {"switch:4", "trn3"};
  spec.collectives = {"allreduce"};
  spec.algorithms = {"ring", "two-shot"};
  spec.sizes = {1024};
  spec.sets = {{"pipeline_chunks", {"1", "4"}}, {"link_bandwidth", {"100GBps", "200GBps", "400GBps"}}};
  auto grid = expand(spec);
  // switch:4 ring: 2 x 3; switch:4 two-shot: 3; trn3 ring: 2 (no link_bandwidth); trn3 two-shot: 1.
  REQUIRE(grid.size() == 6 + 3 + 2 + 1);
  CHECK(grid[0].sets == std::vector<std::pair<std::string, std::string>>{{"pipeline_chunks", "1"},
                                                                         {"link_bandwidth", "100GBps"}});
  CHECK(grid[1].sets[1].second == "200GBps");
  CHECK(grid[3].sets[0].second == "4");
  CHECK(grid[6].sets == std::vector<std::pair<std::string, std::string>>{{"link_bandwidth", "100GBps"}});
  CHECK(grid[11].sets.empty());
}

TEST_CASE("bad sweeps fail before anything runs") {
  SweepSpec spec;
  spec.topologies = {"switch:4"};
  spec.collectives = {"allreduce"};
  spec.algorithms = {"ring"};
  spec.sizes = {1024};
  auto with = [&](auto change) {
    SweepSpec s = spec;
    change(s);
    return s;
  };
  CHECK_THROWS_WITH(expand(with([](SweepSpec& s) { s.topologies = {"swich:4"}; })),
                    Catch::Contains("did you mean"));
  CHECK_THROWS_WITH(expand(with([](SweepSpec& s) { s.algorithms = {"rign"}; })),
                    Catch::Contains("did you mean 'ring'"));
  CHECK_THROWS_WITH(expand(with([](SweepSpec& s) {
                      s.sets = {{"cross_rack_bandwidth", {"1GBps"}}};
                    })),
                    Catch::Contains("no topology, model or algorithm of this sweep has that parameter"));
  CHECK_THROWS_AS(expand(with([](SweepSpec& s) { s.sets = {{"link_bandwidth", {"fast"}}}; })), InputError);
  CHECK_THROWS_AS(expand(with([](SweepSpec& s) { s.collectives = {"allreduc"}; })), InputError);
}

TEST_CASE("a JSON sweep file gives the same grid as the flags") {
  std::string path = std::filesystem::temp_directory_path() / "ultrasim_sweep_file_test.json";
  std::ofstream(path) << R"({"topologies": ["switch:4"], "collectives": ["allreduce"], "algorithms": ["ring"],
                             "sizes": "1KiB:4KiB:x2", "sets": {"link_bandwidth": ["100GBps", "200GBps"]},
                             "seeds": [3]})";
  SweepSpec spec = read_sweep_file(path);
  auto grid = expand(spec);
  REQUIRE(grid.size() == 3 * 2);
  CHECK(grid[1].bytes == 1024);
  CHECK(grid[1].sets.front().second == "200GBps");
  CHECK(grid[1].seed == 3);
  std::ofstream(path) << R"({"topologies": ["switch:4"], "collectives": ["allreduce"], "size": "1KiB"})";
  CHECK_THROWS_WITH(read_sweep_file(path), Catch::Contains("did you mean 'sizes'"));
  std::ofstream(path) << "{not json";
  CHECK_THROWS_WITH(read_sweep_file(path), Catch::Contains("is not JSON"));
}

TEST_CASE(
    "a workload sweep crosses cases (outermost) with its grid, the first axis slowest, as merge patches") {
  std::string path = std::filesystem::temp_directory_path() / "ultrasim_workload_sweep_test.json";
  std::ofstream(path) << R"({"workload": "moe", "base": {"experts": 8, "top_k": 2, "capacity_factor": 1.0},
                             "cases": [{"router": "uniform"}, {"router": "random", "capacity_factor": null}],
                             "grid": {"zipf": [0, 1], "seed": [5, 6, 7]}})";
  SweepSpec spec = read_sweep_file(path);
  CHECK(spec.workload == "moe");
  std::vector<std::string> checked;
  auto grid = expand_workloads(spec, [&](const nlohmann::json& w, const std::string& where) {
    CHECK(w["workload"] == "moe");  // the sweep's kind is written into every point
    checked.push_back(where);
  });
  REQUIRE(grid.size() == 2 * 2 * 3);
  CHECK(checked.size() == grid.size());  // every point checked before anything runs
  CHECK(checked[4] == R"(sweep point 4 {"router":"uniform","zipf":1,"seed":6})");
  CHECK(grid[4].patch == nlohmann::ordered_json::parse(R"({"router":"uniform","zipf":1,"seed":6})"));
  CHECK(grid[4].spec["capacity_factor"] == 1.0);
  CHECK(grid[4].spec.begin().key() == "experts");  // the base's fields keep the file's order
  CHECK(grid[11].spec["router"] == "random");
  CHECK(!grid[11].spec.contains("capacity_factor"));  // null removes the field (RFC 7386)
  CHECK(grid[11].spec["zipf"] == 1);
  CHECK(grid[11].spec["seed"] == 7);
  CHECK(grid[11].run_args() == std::vector<std::string>{"workload", "-", "--format", "json"});
  CHECK(grid[11].inputs().dump() ==
        R"({"workload":"moe","inputs":{"router":"random","capacity_factor":null,"zipf":1,"seed":7}})");
  // The summary lists each point's first column; CSV gives the kind's columns after the inputs.
  nlohmann::ordered_json row = grid[4].inputs();
  row["point"] = 4, row["status"] = "ok", row["layer_time_s"] = 1.5e-4;
  CHECK_THAT(sweep_summary({row}, {"layer_time_s"}),
             Catch::Contains("# moe: layer_time_s per point") && Catch::Contains("150.00 us"));
  CHECK(sweep_csv_header({"layer_time_s"}) == "point,status,workload,inputs,layer_time_s,error\n");
  CHECK(sweep_csv_line(row, {"layer_time_s"}) ==
        "4,ok,moe,\"{\"\"router\"\":\"\"uniform\"\",\"\"zipf\"\":1,\"\"seed\"\":6}\",0.00015,\n");
}

TEST_CASE("bad workload sweeps name the key, and a point's check names the point") {
  std::string path = std::filesystem::temp_directory_path() / "ultrasim_workload_sweep_bad.json";
  auto fails = [&](const std::string& text, const std::string& fragment) {
    std::ofstream(path) << text;
    CHECK_THROWS_WITH(read_sweep_file(path), Catch::Contains(fragment));
  };
  fails(R"({"workload": "moe", "grid": {"zipf": []}})", "\"grid.zipf\" must be a non-empty list");
  fails(R"({"workload": "moe", "grid": {"workload": ["training"]}})", "cannot vary");
  fails(R"({"workload": "moe", "cases": [3]})", "\"cases\" must list objects");
  fails(R"({"workload": "moe", "base": {"workload": "training"}})", "is a \"training\" workload");
  fails(R"({"workload": "moe", "grids": {}})", "did you mean 'grid'");
  fails(R"({"workload": "moe", "base": "/nonexistent/moe.json"})", "cannot read workload file");
  std::ofstream(path) << R"({"workload": "moe", "grid": {"zipf": [0, "x"]}})";
  const SweepSpec spec = read_sweep_file(path);
  auto check = [](const nlohmann::json& w, const std::string& where) {
    if (!w["zipf"].is_number()) throw InputError(where + ": field 'zipf' must be a number");
  };
  CHECK_THROWS_WITH(expand_workloads(spec, check),
                    R"(sweep point 1 {"zipf":"x"}: field 'zipf' must be a number)");
}

TEST_CASE(
    "a schedule file is a sweep's algorithm like a built-in, and a missing one fails before anything runs") {
  const std::string schedule =
      std::string("file:") + ULTRASIM_SOURCE_DIR + "/collectives/schedules/ring_allreduce_8.json";
  SweepSpec spec;
  spec.topologies = {"switch:8"};
  spec.collectives = {"allreduce"};
  spec.algorithms = {"ring", schedule};
  spec.sizes = {1024};
  spec.sets = {{"link_bandwidth", {"100GBps", "200GBps"}}};  // the topology's parameters apply to both
  auto grid = expand(spec);
  REQUIRE(grid.size() == 4);
  CHECK(grid[2].algorithm == schedule);
  CHECK(grid[3].sets == std::vector<std::pair<std::string, std::string>>{{"link_bandwidth", "200GBps"}});
  spec.algorithms = {"file:/nonexistent/ring.json"};
  CHECK_THROWS_WITH(expand(spec), Catch::Contains("cannot read schedule file '/nonexistent/ring.json'"));
}
