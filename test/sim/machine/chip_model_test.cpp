// The chip model (sim/machine/chip_model.hpp): a kernel's time by operation class, what it reduces to with
// neutral parameters, the shape of a GEMM's efficiency, the fixed costs, the dtypes a chip has, and the
// overlap that costs the compute beside communication its share of the chip.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "sim/machine/chip_model.hpp"
#include "topology/base/errors.hpp"
#include "workloads/serving/serving.hpp"

using namespace ultrasim;

namespace {

ParamSet chip(const std::vector<std::pair<std::string, std::string>>& sets) {
  ParamSet p(chip_params());
  p.apply(sets);
  return p;
}

// Efficiencies 1, no shape penalty, one peak for every width, no fixed cost: the plain roofline.
const std::vector<std::pair<std::string, std::string>> kRoofline{{"compute_efficiency", "1"},
                                                                 {"prefill_attention_efficiency", "1"},
                                                                 {"decode_attention_efficiency", "1"},
                                                                 {"gemm_half_rows", "0"},
                                                                 {"hbm_efficiency", "1"},
                                                                 {"bf16_flops_ratio", "1"},
                                                                 {"kernel_overhead", "0s"},
                                                                 {"chip_flops", "2e15"},
                                                                 {"hbm_bandwidth", "4TBps"}};

}  // namespace

TEST_CASE("with efficiencies 1 and no fixed costs a segment is the plain roofline, to 1e-12") {
  const ChipModel m(chip(kRoofline));
  for (const double flops : {1e9, 3.7e12, 5e14})
    for (const double bytes : {1e6, 2.2e9, 8e10}) {
      ChipWork w;
      w.gemm_flops = 0.7 * flops, w.rows = 3, w.attention_flops = 0.3 * flops, w.bytes = bytes, w.kernels = 6;
      const double roofline = std::max(flops / 2e15, bytes / 4e12);
      CHECK(m.time(w).seconds() == Approx(roofline).epsilon(1e-12));
    }
}

TEST_CASE("a GEMM's efficiency grows with its rows: half of compute_efficiency at gemm_half_rows") {
  const ChipModel m(chip({{"chip_flops", "1e15"},
                          {"compute_efficiency", "0.8"},
                          {"gemm_half_rows", "64"},
                          {"kernel_overhead", "0s"}}));
  ChipWork w;
  w.gemm_flops = 1e12, w.gemm_dtype = "float8";
  w.rows = 64;  // 0.8 x 64 / 128 = 0.4 of the peak
  CHECK(m.time(w).compute_s == Approx(1e12 / 0.4e15).epsilon(1e-12));
  w.rows = 4096 - 64;  // 0.8 x 4032 / 4096
  CHECK(m.time(w).compute_s == Approx(1e12 / (0.8e15 * 4032 / 4096)).epsilon(1e-12));
}

TEST_CASE("each dtype runs at its own peak, and a chip without 4-bit units refuses 4-bit weights") {
  const ChipModel m(chip({{"chip_flops", "1e15"}, {"bf16_flops_ratio", "0.5"}, {"fp4_flops_ratio", "2"}}));
  CHECK(m.peak("float8") == 1e15);
  CHECK(m.peak("bfloat16") == 0.5e15);
  CHECK(m.peak("nvfp4") == 2e15);
  CHECK(m.peak("float32") == 0.25e15);
  const ChipModel hopper(chip({{"fp4_flops_ratio", "0"}}));
  CHECK_THROWS_WITH(hopper.check_dtype("mxfp4", "weights on h100"),
                    Catch::Contains("weights on h100") && Catch::Contains("no 4-bit units"));
  CHECK_THROWS_WITH(m.peak("float5"), Catch::Contains("unknown dtype 'float5'"));
  // 4-bit formats carry their block scales in HBM.
  CHECK(dtype_bytes("mxfp4") == 0.5 + 1.0 / 32);
  CHECK(dtype_bytes("nvfp4") == 0.5 + 1.0 / 16);
}

TEST_CASE("fixed costs add to the roofline: kernels x kernel_overhead") {
  const ChipModel m(
      chip({{"kernel_overhead", "5us"}, {"hbm_bandwidth", "1TBps"}, {"hbm_efficiency", "0.5"}}));
  ChipWork w;
  w.bytes = 1e9, w.kernels = 4;
  const ChipTime t = m.time(w);
  CHECK(t.memory_s == Approx(2e-3).epsilon(1e-12));  // 1 GB at 0.5 TB/s
  CHECK(t.fixed_s == Approx(20e-6).epsilon(1e-12));
  CHECK(t.seconds() == Approx(2.02e-3).epsilon(1e-12));
  CHECK(t.memory_bound());
}

TEST_CASE("overlap costs the compute beside communication its share of the chip") {
  const ChipModel m(chip({{"comm_share", "0.2"}}));
  // Compute 10 beside communication 8: the compute runs at 80 % for 8, then alone: 8 + (10 - 6.4) = 11.6,
  // longer than max(10, 8).
  CHECK(m.overlapped_seconds(10, 8) == Approx(11.6).epsilon(1e-12));
  // Compute 5 fits inside the communication even slowed (5 < 0.8 x 8): the communication bounds it.
  CHECK(m.overlapped_seconds(5, 8) == 8);
  const ChipModel free_overlap(chip({{"comm_share", "0"}}));
  CHECK(free_overlap.overlapped_seconds(10, 8) == 10);
}

TEST_CASE("a profile file gives every parameter, each checked and named when wrong") {
  const std::string dir = "chip_profile_test_files";
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const nlohmann::json& j) {
    std::ofstream(dir + "/" + name) << j.dump();
    return dir + "/" + name;
  };
  nlohmann::json good = chip_profile_json(chip_profile("h100", ""));
  const ChipProfile read = read_chip_profile(write("good.json", good));
  CHECK(read.name == "h100");
  REQUIRE(read.values.size() == serving_params().size());
  nlohmann::json missing = good;
  missing["values"].erase("hbm_efficiency");
  CHECK_THROWS_WITH(read_chip_profile(write("missing.json", missing)),
                    Catch::Contains("missing field 'values.hbm_efficiency'"));
  for (const auto& [field, value, says] : std::vector<std::tuple<std::string, nlohmann::json, std::string>>{
           {"compute_efficiency", -0.5, "compute_efficiency"},
           {"compute_efficiency", 1.5, "out of range"},
           {"decode_attention_efficiency", "nan", "decode_attention_efficiency"},
           {"kernel_overhead", "-1us", "kernel_overhead"},
           {"comm_share", 2, "comm_share"},
           {"hbm_bandwidth", true, "must be a number or a string"}}) {
    nlohmann::json bad = good;
    bad["values"][field] = value;
    CHECK_THROWS_AS(read_chip_profile(write("bad.json", bad)), InputError);
    CHECK_THROWS_WITH(read_chip_profile(write("bad.json", bad)),
                      Catch::Contains("chip profile '" + dir + "/bad.json'") && Catch::Contains(field) &&
                          Catch::Contains(says));
  }
  nlohmann::json unknown = good;
  unknown["values"]["compute_eficiency"] = 0.5;
  CHECK_THROWS_WITH(read_chip_profile(write("unknown.json", unknown)), Catch::Contains("did you mean"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("auto picks the chip by the scale-up preset, inside a cluster spec too") {
  CHECK(chip_profile("auto", "hgx-h100").name == "h100");
  CHECK(chip_profile("auto", "cluster:4:hgx-h100").name == "h100");
  CHECK(chip_profile("auto", "cluster:2:nvl72@0-99").name == "gb200");
  CHECK(chip_profile("auto", "trn2-ultraserver").name == "trn2");
  CHECK(chip_profile("auto", "switch:8").name == "trn3");
  CHECK_THROWS_WITH(chip_profile("h10", ""), Catch::Contains("did you mean 'h100'"));
}
