// Kernel tables by shape (sim/machine/kernel_tables.hpp) and the chip model that prices from them: a
// profile without tables is the roofline bit for bit, a table holding one shape gives that shape's time,
// interpolation is exact at rows and monotone along each axis between them, an operation outside falls
// back (and says so), and a bad table is refused naming its file, row and field.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "sim/machine/chip_model.hpp"
#include "topology/base/errors.hpp"
#include "workloads/serving/model.hpp"

using namespace ultrasim;

namespace {

std::string table_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("ultrasim_kernel_table_" + name + ".csv");
  std::ofstream(path) << text;
  return path.string();
}

ChipModel chip_with(const std::string& tables, std::vector<std::pair<std::string, std::string>> sets = {}) {
  ParamSet p(chip_params());
  sets.emplace_back("kernel_tables", tables);
  p.apply(sets);
  return ChipModel(p);
}

KernelOp gemm(double m, double n, double k) {
  KernelOp op;
  op.x = m, op.y = n * k, op.k = k, op.flops = 2 * m * n * k, op.bytes = n * k;
  return op;
}

// A segment's work: two GEMMs and a decode attention kernel, with their part of the totals.
ChipWork work_with_ops() {
  ChipWork w;
  w.gemm_flops = 2.0 * 64 * 4096 * 7168 + 2.0 * 64 * 7168 * 2048, w.rows = 64, w.bytes = 5e7, w.kernels = 6;
  w.attention_flops = 3e10;
  w.ops = {gemm(64, 4096, 7168), gemm(64, 7168, 2048)};
  KernelOp a;
  a.op = KernelClass::kDecodeAttention, a.attention = "mla", a.dtype = "bfloat16";
  a.x = 32, a.y = 4096, a.flops = 3e10, a.bytes = 1e7;
  w.ops.push_back(a);
  return w;
}

const char* kHeader = "operation,m,n,k,groups,seconds,source\n";

}  // namespace

TEST_CASE("without tables a work's operations change nothing: the roofline's time, bit for bit") {
  const ChipModel m = chip_with("none");
  ChipWork with = work_with_ops(), without = with;
  without.ops.clear();
  const ChipTime a = m.time(with), b = m.time(without);
  CHECK(a.seconds() == b.seconds());
  CHECK(a.compute_s == b.compute_s);
  CHECK(a.memory_s == b.memory_s);
  CHECK(a.tabled == 0);
  CHECK(kernel_class_names(a.fell_back) == std::vector<std::string>{"gemm", "decode_attention"});
}

TEST_CASE("a table holding one shape gives that shape its time exactly, and nothing else") {
  const auto path = table_file("one", std::string(kHeader) + "gemm,64,4096,7168,,1.3e-05,one row\n");
  const ChipModel m = chip_with(path, {{"kernel_overhead", "0s"}});
  ChipWork w;
  const KernelOp op = gemm(64, 4096, 7168);
  w.gemm_flops = op.flops, w.rows = 64, w.bytes = op.bytes, w.kernels = 1, w.ops = {op};
  const ChipTime t = m.time(w);
  CHECK(t.seconds() == Approx(1.3e-5).epsilon(1e-12));
  CHECK(kernel_class_names(t.tabled) == std::vector<std::string>{"gemm"});
  CHECK(t.fell_back == 0);
  // Another M, another (n, k): outside the one-row table, the roofline prices it.
  for (const KernelOp& other : {gemm(65, 4096, 7168), gemm(64, 4096, 7169)}) {
    ChipWork o = w;
    o.gemm_flops = other.flops, o.bytes = other.bytes, o.ops = {other};
    ChipWork plain = o;
    plain.ops.clear();
    CHECK(m.time(o).seconds() == m.time(plain).seconds());
    CHECK(kernel_class_names(m.time(o).fell_back) == std::vector<std::string>{"gemm"});
  }
}

TEST_CASE("inside a table the time is exact at its rows, log-log linear between, monotone in each axis") {
  // Two series (n k = 4096 x 7168 and 7168 x 7168), each rising in m; time per FLOP falling.
  const auto path = table_file("grid", std::string(kHeader) +
                                           "gemm,64,4096,7168,,10e-06,a\n"
                                           "gemm,256,4096,7168,,20e-06,a\n"
                                           "gemm,1024,4096,7168,,60e-06,a\n"
                                           "gemm,64,7168,7168,,16e-06,b\n"
                                           "gemm,256,7168,7168,,30e-06,b\n"
                                           "gemm,1024,7168,7168,,100e-06,b\n");
  const KernelTables& tables = chip_with(path).tables();
  CHECK(*tables.seconds(gemm(256, 4096, 7168)) == Approx(20e-6).epsilon(1e-12));
  CHECK(*tables.seconds(gemm(1024, 7168, 7168)) == Approx(100e-6).epsilon(1e-12));
  // m = 128, halfway in log between 64 and 256: the time per FLOP is the geometric mean of theirs.
  const double per_flop = std::sqrt(10e-6 / gemm(64, 4096, 7168).flops * 20e-6 / gemm(256, 4096, 7168).flops);
  CHECK(*tables.seconds(gemm(128, 4096, 7168)) ==
        Approx(per_flop * gemm(128, 4096, 7168).flops).epsilon(1e-12));
  // Monotone along m and along n (k fixed) over a fine grid inside the table.
  double last_row = 0;
  for (double n = 4096; n <= 7168; n += 256) {
    double last = 0;
    for (double m = 64; m <= 1024; m *= 1.1) {
      const auto t = tables.seconds(gemm(m, n, 7168));
      REQUIRE(t);
      CHECK(*t >= last);
      last = *t;
    }
    const double at_512 = *tables.seconds(gemm(512, n, 7168));
    CHECK(at_512 >= last_row);
    last_row = at_512;
  }
  CHECK_FALSE(tables.seconds(gemm(32, 4096, 7168)));  // below the smallest m
  CHECK_FALSE(tables.seconds(gemm(64, 8192, 7168)));  // beyond the largest n k
}

TEST_CASE("grouped GEMMs interpolate between the group counts a table has") {
  const auto path = table_file("groups",
                               "operation,m,n,k,groups,seconds\n"
                               "grouped_gemm,32,4096,7168,8,90e-06\n"
                               "grouped_gemm,128,4096,7168,8,120e-06\n"
                               "grouped_gemm,32,4096,7168,32,325e-06\n"
                               "grouped_gemm,128,4096,7168,32,410e-06\n");
  const KernelTables& tables = chip_with(path).tables();
  KernelOp op = gemm(64, 4096, 7168);
  op.op = KernelClass::kGroupedGemm;
  double last = 0;
  for (const double g : {8.0, 12.0, 16.0, 24.0, 32.0}) {
    op.z = g, op.flops = 2 * g * 64 * 4096 * 7168;
    const auto t = tables.seconds(op);
    REQUIRE(t);
    CHECK(*t > last);
    last = *t;
  }
  op.z = 64, op.flops = 2.0 * 64 * 64 * 4096 * 7168;
  CHECK_FALSE(tables.seconds(op));
}

TEST_CASE("attention rows are keyed by type and heads, and a table's floor bounds a tabled kernel") {
  const auto path = table_file("attention",
                               "operation,attention,batch,context,heads,flops,us\n"
                               "decode_attention,mla,32,4096,128,3.65e10,85.6\n"
                               "decode_attention,mla,128,4096,128,1.46e11,292\n");
  const ChipModel m = chip_with(path, {{"attention_floor", "100us"}});
  KernelOp a;
  a.op = KernelClass::kDecodeAttention, a.attention = "mla", a.dtype = "bfloat16", a.heads = 128;
  a.x = 128, a.y = 4096, a.flops = 1.46e11;
  CHECK(*m.tables().seconds(a) == Approx(292e-6).epsilon(1e-12));
  a.heads = 16;  // other heads: not this table's
  CHECK_FALSE(m.tables().seconds(a));
  a.heads = 128, a.x = 32, a.flops = 3.65e10;
  ChipWork w;
  w.attention_flops = a.flops, w.ops = {a};
  CHECK(m.time(w).seconds() == Approx(100e-6).epsilon(1e-12));  // 85.6 us, floored
}

TEST_CASE("a bad table is refused naming its file, row and field") {
  auto refused = [](const std::string& name, const std::string& rows, const std::string& what) {
    const auto path = table_file(name, rows);
    CHECK_THROWS_WITH(chip_with(path), Catch::Contains(path) && Catch::Contains(what));
  };
  refused("negative", std::string(kHeader) + "gemm,64,4096,7168,,-1e-05,x\n", "line 2: field 'seconds'");
  refused("nan", std::string(kHeader) + "gemm,64,4096,7168,,nan,x\n", "line 2: field 'seconds'");
  refused("unsorted", std::string(kHeader) + "gemm,128,4096,7168,,2e-05,x\ngemm,64,4096,7168,,1e-05,x\n",
          "line 3: field 'm' 64 after 128");
  refused("duplicate", std::string(kHeader) + "gemm,64,4096,7168,,2e-05,x\ngemm,64,4096,7168,,1e-05,x\n",
          "line 3: field 'm' repeats the shape of");
  refused("class", std::string(kHeader) + "gemv,64,4096,7168,,1e-05,x\n", "line 2: field 'operation'");
  refused("units", "operation,m,n,k,time\ngemm,64,4096,7168,1e-05\n", "line 2: missing field 'seconds'");
  refused("shape", "operation,m,n,seconds\ngemm,64,4096,1e-05\n", "line 2: missing field 'k'");
  refused("both", "operation,m,n,k,seconds,us\ngemm,64,4096,7168,1e-05,10\n", "line 2: give the time");
  refused("columns", "operation,m,m,n,k,seconds\ngemm,64,64,4096,7168,1e-05\n", "column 'm' appears twice");
  // A class the chip cannot run: 4-bit GEMMs on a chip without 4-bit units.
  const auto fp4 = table_file("fp4", "operation,dtype,m,n,k,seconds\ngemm,nvfp4,64,4096,7168,1e-05\n");
  CHECK_THROWS_WITH(
      chip_with(fp4, {{"fp4_flops_ratio", "0"}}),
      Catch::Contains(fp4) && Catch::Contains("line 2, field 'dtype'") && Catch::Contains("no 4-bit units"));
  CHECK_THROWS_WITH(chip_with("hoper"), Catch::Contains("did you mean 'hopper'"));
}

TEST_CASE("the built-in Hopper table loads and prices DeepSeek-V3's shapes on H800 as measured") {
  const KernelTables& hopper = *kernel_tables("hopper");
  CHECK(kernel_class_names(hopper.classes()) ==
        std::vector<std::string>{"gemm", "grouped_gemm", "decode_attention", "prefill_attention"});
  // InferSim bench_data, FlashInfer MLA decode on H800: batch 128 x KV 4096 in 292.023 us.
  KernelOp a;
  a.op = KernelClass::kDecodeAttention, a.attention = "mla", a.dtype = "bfloat16", a.heads = 128;
  a.x = 128, a.y = 4096, a.flops = 128.0 * 4096 * 128 * 2 * (576 + 512);
  CHECK(*hopper.seconds(a) == Approx(292.023e-6).epsilon(1e-9));
}

TEST_CASE("a model's attention GEMMs add up to its attention weights") {
  for (const std::string name : {"deepseek-v3", "llama3-70b"}) {
    const ModelShape m = model_from_json(name, "test");
    double sum = 0;
    for (const auto& [n, k] : m.attention_gemms()) sum += n * k;
    CHECK(sum == Approx(m.attention_params()).epsilon(1e-12));
  }
  const auto ds = model_from_json("deepseek-v3", "test").attention_gemms();
  CHECK(ds.front() == std::pair<double, double>{2112, 7168});  // q_a and kv_a fused, as DeepGEMM's table
}
