// Kernel tables by shape: measured kernel times over a grid of shapes, per operation class, that the chip
// model (chip_model.hpp) prices an operation from where the operation's shape lies inside the table, and
// leaves to its fitted roofline elsewhere. Free of SimGrid.
//
// Classes and their axes:
//   gemm            x = m (the tokens through it), y = n k (the weights' elements), a series per (n, k)
//   grouped_gemm    as gemm, per group (an expert), and z = groups (the experts on the chip)
//   decode_attention, prefill_attention (per attention type mla | gqa | mha, and per heads, kv_heads and
//                   head_dim on the chip where the rows give them; a row without one serves any)
//                   x = batch (requests), y = context (KV tokens a request's query attends; prefill: the
//                   tokens of its chunk)
// The rows of one class, key and z with one y (a GEMM: one n and k) form a series, sorted by x. An
// operation is inside the table when, at its z (or between the two z the table has around it), a series
// has its y and spans its x, or the two series around its y both span its x. Inside, the time per FLOP is
// interpolated linearly in log x, log y and log z (the time is piecewise linear in log-log space: monotone
// along each axis where the table is, and exact at a row: t(row's shape) = the row's seconds when the
// operation's FLOPs are the row's), and the time is flops x (seconds / flops), at least the class's floor.
// Outside, the operation falls back to the roofline.
//
// Files (CSV with a header, or a JSON array of objects with the same fields; the schema calibrate-chip's
// kernel points use, so one file serves both):
//   operation   a class above;  attention  mla | gqa | mha (attention rows; empty: any)
//   dtype       the multiplier's (default float8 for GEMMs, bfloat16 for attention)
//   m, n, k, groups   a GEMM's shape (groups: grouped_gemm, default 1); its FLOPs 2 groups m n k
//   batch, context, flops   an attention row's shape and its score FLOPs
//   heads, kv_heads, head_dim   an attention row's heads on the chip (optional: empty serves any)
//   seconds (or us)   the kernel's measured time
//   other fields (source, role, kernels, bytes, gpu, ...) are carried, not read.
// Refused with one line naming the file, row and field: a time that is missing, <= 0 or not finite; a
// shape missing or < 1; a class that does not exist; a row of a series out of order in x or repeating
// an x (unsorted or duplicate shapes).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace ultrasim {

enum class KernelClass { kGemm, kGroupedGemm, kDecodeAttention, kPrefillAttention };
inline constexpr int kKernelClasses = 4;
const char* kernel_class_name(KernelClass c);
// The names of the classes in `mask` (bit i: class i), in class order.
std::vector<std::string> kernel_class_names(unsigned mask);
inline bool is_gemm(KernelClass c) {
  return c == KernelClass::kGemm || c == KernelClass::kGroupedGemm;
}
inline unsigned kernel_class_bit(KernelClass c) {
  return 1u << static_cast<int>(c);
}

// One operation of a chip's work that a table may price: its class, shape, dtype and its share of the
// work's FLOPs, HBM bytes and kernels (what the roofline prices when the table does not).
struct KernelOp {
  KernelClass op = KernelClass::kGemm;
  std::string attention;  // attention classes: mla | gqa | mha
  std::string dtype = "float8";
  double x = 0, y = 0, z = 1;                 // the class's axes (above)
  double k = 0;                               // a GEMM's k (its series with y)
  int heads = 0, kv_heads = 0, head_dim = 0;  // attention, on the chip
  double flops = 0, bytes = 0;
  int kernels = 1;
};

// A GEMM (class gemm, groups 1; or grouped_gemm, one group per expert), each group m x k by k x n with
// weights of `weight_bytes` each: its FLOPs 2 groups m n k, its bytes the weights'.
KernelOp gemm_kernel(KernelClass c, const std::string& dtype, double m, double n, double k, double groups,
                     double weight_bytes);

// One measured row, with where it came from ("file 'x.csv', row 7").
struct KernelRow {
  KernelClass op = KernelClass::kGemm;
  std::string attention, dtype;
  int heads = 0, kv_heads = 0, head_dim = 0;  // 0: any
  double x = 0, y = 0, z = 1, k = 0, flops = 0, seconds = 0;
  std::string source, where;
  std::map<std::string, std::string> fields;  // as read (the non-empty ones): what a profile writes back
};

class KernelTables {
 public:
  KernelTables() = default;
  // The rows, checked (InputError naming the row and field, as above).
  explicit KernelTables(std::vector<KernelRow> rows);
  bool empty() const { return rows_.empty(); }
  const std::vector<KernelRow>& rows() const { return rows_; }
  // Bit i set where the tables hold a row of class i.
  unsigned classes() const { return classes_; }
  // A text that changes with any row's class, key, shape or time (a cache's key).
  std::string fingerprint() const;
  // The time of `op` from the tables (before any floor); nullopt outside them.
  std::optional<double> seconds(const KernelOp& op) const;

 private:
  struct Series {
    double y = 0, k = 0;
    std::vector<double> log_x, log_t_per_flop;  // sorted by x
  };
  using Plane = std::vector<Series>;  // sorted by y, then k
  // class, attention, dtype, heads, kv_heads, head_dim
  using Key = std::tuple<int, std::string, std::string, int, int, int>;
  static std::optional<double> along(const Series& s, double log_x);
  static std::optional<double> in_plane(const Plane& plane, const KernelOp& op);
  static std::optional<double> in_z(const std::map<double, Plane>& planes, const KernelOp& op);
  std::vector<KernelRow> rows_;
  std::map<Key, std::map<double, Plane>> tables_;  // by z
  unsigned classes_ = 0;
};

// The rows of a table file (CSV or JSON array, above); InputError naming the file, row and field.
std::vector<KernelRow> read_kernel_rows(const std::string& path);
// One row from its fields as text (a CSV row's cells, a JSON object's values), `where` naming it.
KernelRow kernel_row(const std::map<std::string, std::string>& fields, const std::string& where);

// The tables a chip parameter `kernel_tables` names: "none"; a built-in set (builtin_kernel_tables());
// a file (a name ending in .csv or .json), read once per process; or a key register_kernel_tables() gave.
// InputError for an unknown name.
std::shared_ptr<const KernelTables> kernel_tables(const std::string& name);
// Makes `rows` known as `key` (a chip profile's own tables); the same key again replaces them.
void register_kernel_tables(const std::string& key, std::vector<KernelRow> rows);
// The built-in sets by name (kernel_tables_data.cpp), each row with its source.
const std::vector<std::pair<std::string, std::vector<KernelRow>>>& builtin_kernel_tables();

}  // namespace ultrasim
