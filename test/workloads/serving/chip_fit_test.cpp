// Fitting a chip profile to kernel times (workloads/serving/chip_fit.hpp): points made by a known profile
// give its parameters back, held-out points are judged apart, a PyTorch profiler trace's GEMMs become
// points, and bad measurements are refused naming the row and field.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "topology/base/errors.hpp"
#include "workloads/serving/chip_fit.hpp"

using namespace ultrasim;

namespace {

std::string write(const std::string& name, const std::string& text) {
  std::filesystem::create_directories("chip_fit_test_files");
  const std::string path = "chip_fit_test_files/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string sci(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.12e", x);
  return text;
}

std::string value(const ChipProfile& p, const std::string& name) {
  for (const ChipValue& v : p.values)
    if (v.name == name) return v.value;
  return "";
}

}  // namespace

TEST_CASE("kernel times made by a known chip give its efficiencies and fixed cost back") {
  // The truth: h100's peaks with efficiency 0.7, half rows 48, HBM at 85 %, 3 us per kernel.
  ParamSet truth(serving_params());
  for (const ChipValue& v : chip_profile("h100", "").values) truth.apply({{v.name, v.value}});
  truth.apply({{"compute_efficiency", "0.7"},
               {"gemm_half_rows", "48"},
               {"hbm_efficiency", "0.85"},
               {"kernel_overhead", "3us"},
               {"prefill_attention_efficiency", "0.55"}});
  const ChipModel model(truth);
  std::string csv = "operation,m,n,k,flops,bytes,dtype,seconds\n";
  for (const int m : {1, 8, 64, 128, 512, 4096})
    for (const int n : {2048, 7168}) {
      ChipWork w;
      w.gemm_flops = 2.0 * m * n * 7168, w.rows = m, w.kernels = 1;
      w.bytes = (1.0 * m * 7168 + 1.0 * n * 7168) + 2.0 * m * n;
      csv += "gemm," + std::to_string(m) + "," + std::to_string(n) + ",7168,,,float8," +
             sci(model.time(w).seconds()) + "\n";
    }
  for (const double bytes : {1e6, 1e8, 1e9}) {
    ChipWork w;
    w.bytes = bytes, w.kernels = 1;
    csv += "memory,,,,," + sci(bytes) + ",," + sci(model.time(w).seconds()) + "\n";
  }
  ChipWork a;
  a.attention_flops = 1e12, a.decode = false, a.kernels = 1;
  csv += "prefill_attention,,,,1e12,0,bfloat16," + sci(model.time(a).seconds()) + "\n";
  const auto points = read_kernel_points(write("known.csv", csv));
  REQUIRE(points.size() == 16);
  const ChipFit fit = fit_chip(chip_profile("h100", ""), points, 5, {}, "known.csv");
  CHECK(std::stod(value(fit.fitted, "compute_efficiency")) == Approx(0.7).epsilon(0.01));
  CHECK(std::stod(value(fit.fitted, "gemm_half_rows")) == Approx(48).epsilon(0.03));
  CHECK(std::stod(value(fit.fitted, "hbm_efficiency")) == Approx(0.85).epsilon(0.01));
  CHECK(std::stod(value(fit.fitted, "prefill_attention_efficiency")) == Approx(0.55).epsilon(0.01));
  CHECK(fit.fit_after < 0.005);
  CHECK(fit.held_after < 0.01);  // every 5th point, never seen by the fit
  CHECK(fit.fit_before > 0.05);  // h100's own values are not these
  // Not informed by any point: kept from the base, and the file the fit writes reads back.
  CHECK(value(fit.fitted, "decode_attention_efficiency") ==
        value(chip_profile("h100", ""), "decode_attention_efficiency"));
  const std::string out = write("fitted.json", chip_profile_json(fit.fitted).dump());
  CHECK(value(read_chip_profile(out), "hbm_efficiency") == value(fit.fitted, "hbm_efficiency"));
}

TEST_CASE("a PyTorch profiler trace's GEMMs and copies become kernel points") {
  // aten::mm [[M, K], [K, N]] launching one kernel, aten::addmm with its bias first, a memcpy.
  const std::string trace = write("kineto.json", R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 50,
     "args": {"External id": 7, "Input Dims": [[16, 4096], [4096, 8192]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
    {"ph": "X", "cat": "kernel", "name": "sm90_gemm", "ts": 10, "dur": 40.5, "args": {"External id": 7}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "ts": 60, "dur": 50,
     "args": {"External id": 9, "Input Dims": [[1024], [256, 512], [512, 1024]], "Input type": ["float", "float", "float"]}},
    {"ph": "X", "cat": "kernel", "name": "gemm_a", "ts": 70, "dur": 10, "args": {"External id": 9}},
    {"ph": "X", "cat": "kernel", "name": "bias_add", "ts": 80, "dur": 2, "args": {"External id": 9}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::softmax", "ts": 120, "dur": 5, "args": {"External id": 11}},
    {"ph": "X", "cat": "kernel", "name": "softmax", "ts": 121, "dur": 3, "args": {"External id": 11}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD", "ts": 130, "dur": 100, "args": {"bytes": 300000000}}
  ]})");
  const auto points = read_kernel_points(trace);
  REQUIRE(points.size() == 3);
  CHECK(points[0].operation == "memory");
  CHECK(points[0].work.bytes == 3e8);
  CHECK(points[0].seconds == Approx(100e-6));
  CHECK(points[1].operation == "gemm");
  CHECK(points[1].work.gemm_flops == 2.0 * 16 * 8192 * 4096);
  CHECK(points[1].work.rows == 16);
  CHECK(points[1].work.gemm_dtype == "bfloat16");
  CHECK(points[1].seconds == Approx(40.5e-6));
  CHECK(points[2].work.gemm_flops == 2.0 * 256 * 1024 * 512);
  CHECK(points[2].work.gemm_dtype == "float32");
  CHECK(points[2].work.kernels == 2);
  CHECK(points[2].seconds == Approx(12e-6));
}

TEST_CASE("bad kernel times are refused naming the file, the row and the field") {
  CHECK_THROWS_WITH(read_kernel_points(write("a.csv", "operation,seconds\ngemm,1e-3\n")),
                    Catch::Contains("a.csv' line 2: a GEMM needs m, n and k, or flops and rows"));
  CHECK_THROWS_WITH(read_kernel_points(write("b.csv", "operation,m,n,k,seconds\ngem,1,2,3,1e-3\n")),
                    Catch::Contains("unknown operation 'gem'; did you mean 'gemm'"));
  CHECK_THROWS_WITH(read_kernel_points(write("c.csv", "operation,m,n,k,seconds\ngemm,1,2,3,-1\n")),
                    Catch::Contains("field 'seconds'"));
  CHECK_THROWS_WITH(read_kernel_points(write("d.csv", "operation,m,n,k,seconds\ngemm,1,2,3,nan\n")),
                    Catch::Contains("field 'seconds'"));
  CHECK_THROWS_WITH(
      read_kernel_points(write("e.csv", "operation,m,n,k,seconds,dtype\ngemm,1,2,3,1e-3,fp9\n")),
      Catch::Contains("field 'dtype'"));
  CHECK_THROWS_WITH(read_kernel_points(write("f.json", "[{\"operation\": \"memory\", \"seconds\": 1}]")),
                    Catch::Contains("entry 0: a memory point needs its bytes"));
  CHECK_THROWS_WITH(read_kernel_points(write("g.csv", "m,n\n1,2\n")), Catch::Contains("expected a header"));
  const auto points =
      read_kernel_points(write("h.csv", "operation,m,n,k,seconds,role\ngemm,1,2,3,1e-3,held-out\n"));
  CHECK_THROWS_WITH(fit_chip(chip_profile("h100", ""), points, 0, {}, "h.csv"),
                    Catch::Contains("every point is held out"));
  // A 4-bit point on a chip without 4-bit units.
  const auto fp4 =
      read_kernel_points(write("i.csv", "operation,m,n,k,seconds,dtype\ngemm,64,64,64,1e-5,nvfp4\n"));
  CHECK_THROWS_WITH(fit_chip(chip_profile("h100", ""), fp4, 0, {}, "i.csv"),
                    Catch::Contains("no 4-bit units"));
  std::filesystem::remove_all("chip_fit_test_files");
}
