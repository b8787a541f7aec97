#include "sim/machine/kernel_tables.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {

namespace {

constexpr const char* kClassNames[kKernelClasses] = {"gemm", "grouped_gemm", "decode_attention",
                                                     "prefill_attention"};
constexpr std::size_t kMaxRows = 100000;

// A cell as a finite number > 0 (`at_least`: and >= it).
double positive_field(const std::string& text, const std::string& where, const std::string& field,
                      double at_least) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(x) || x <= 0 || x < at_least ||
      x > 1e30)
    throw InputError(where + ": field '" + field + "' must be a finite number " +
                     (at_least > 0 ? ">= " + shortest_number(at_least) : std::string("> 0")) + ", not '" +
                     text + "'");
  return x;
}

}  // namespace

const char* kernel_class_name(KernelClass c) {
  return kClassNames[static_cast<int>(c)];
}

std::vector<std::string> kernel_class_names(unsigned mask) {
  std::vector<std::string> out;
  for (int i = 0; i < kKernelClasses; ++i)
    if (mask & (1u << i)) out.push_back(kClassNames[i]);
  return out;
}

KernelOp gemm_kernel(KernelClass c, const std::string& dtype, double m, double n, double k, double groups,
                     double weight_bytes) {
  KernelOp op;
  op.op = c;
  op.dtype = dtype, op.x = m, op.y = n * k, op.k = k, op.z = groups;
  op.flops = 2 * groups * m * n * k, op.bytes = groups * n * k * weight_bytes;
  return op;
}

KernelRow kernel_row(const std::map<std::string, std::string>& f, const std::string& where) {
  auto get = [&](const std::string& k) -> const std::string* {
    const auto it = f.find(k);
    return it == f.end() || it->second.empty() ? nullptr : &it->second;
  };
  auto need = [&](const std::string& k, double at_least) {
    if (!get(k)) throw InputError(where + ": missing field '" + k + "'");
    return positive_field(*get(k), where, k, at_least);
  };
  KernelRow r;
  r.where = where;
  if (!get("operation")) throw InputError(where + ": missing field 'operation'");
  const std::vector<std::string> names(std::begin(kClassNames), std::end(kClassNames));
  const auto it = std::find(names.begin(), names.end(), *get("operation"));
  if (it == names.end())
    throw InputError(where +
                     ": field 'operation': " + unknown_name_message("class", *get("operation"), names));
  r.op = static_cast<KernelClass>(it - names.begin());
  r.dtype = get("dtype") ? *get("dtype") : (is_gemm(r.op) ? "float8" : "bfloat16");
  if (get("seconds") && get("us"))
    throw InputError(where + ": give the time as 'seconds' or as 'us', not both");
  if (get("seconds"))
    r.seconds = need("seconds", 0);
  else if (get("us"))
    r.seconds = need("us", 0) * 1e-6;
  else
    throw InputError(where + ": missing field 'seconds' (the kernel's time in s; or 'us', in microseconds)");
  if (r.seconds > 1e3) throw InputError(where + ": field 'seconds' must be at most 1000");
  if (is_gemm(r.op)) {
    const double m = need("m", 1), n = need("n", 1), k = need("k", 1);
    const double g = r.op == KernelClass::kGroupedGemm && get("groups") ? need("groups", 1) : 1;
    r.x = m, r.y = n * k, r.z = g, r.k = k, r.flops = 2 * g * m * n * k;
  } else {
    r.attention = get("attention") ? *get("attention") : "";
    if (!r.attention.empty() && r.attention != "mla" && r.attention != "gqa" && r.attention != "mha")
      throw InputError(where + ": field 'attention': " +
                       unknown_name_message("attention", r.attention, {"mla", "gqa", "mha"}));
    r.x = need("batch", 1), r.y = need("context", 1), r.flops = need("flops", 0);
    for (auto [field, to] :
         {std::pair{"heads", &r.heads}, {"kv_heads", &r.kv_heads}, {"head_dim", &r.head_dim}})
      if (get(field)) {
        const double v = need(field, 1);
        if (v != std::floor(v) || v > 1e6)
          throw InputError(where + ": field '" + field + "' must be a whole number in [1, 1000000]");
        *to = static_cast<int>(v);
      }
  }
  r.source = get("source") ? *get("source") : "";
  for (const auto& [k, v] : f)
    if (!v.empty()) r.fields[k] = v;
  return r;
}

KernelTables::KernelTables(std::vector<KernelRow> rows) : rows_(std::move(rows)) {
  using SeriesKey = std::tuple<Key, double, double, double>;  // key, z, y, k
  std::map<SeriesKey, const KernelRow*> last;                 // the previous row of each series
  for (const KernelRow& r : rows_) {
    const Key key{static_cast<int>(r.op), r.attention, r.dtype, r.heads, r.kv_heads, r.head_dim};
    const std::string field = is_gemm(r.op) ? "m" : "batch";
    if (const auto it = last.find({key, r.z, r.y, r.k}); it != last.end()) {
      if (r.x == it->second->x)
        throw InputError(r.where + ": field '" + field + "' repeats the shape of " + it->second->where);
      if (r.x < it->second->x)
        throw InputError(r.where + ": field '" + field + "' " + shortest_number(r.x) + " after " +
                         shortest_number(it->second->x) + " (" + it->second->where +
                         "): a series' shapes must be sorted");
    }
    last[{key, r.z, r.y, r.k}] = &r;
    Plane& plane = tables_[key][r.z];
    auto s =
        std::find_if(plane.begin(), plane.end(), [&](const Series& x) { return x.y == r.y && x.k == r.k; });
    if (s == plane.end()) s = plane.insert(plane.end(), Series{r.y, r.k, {}, {}});
    s->log_x.push_back(std::log(r.x));
    s->log_t_per_flop.push_back(std::log(r.seconds / r.flops));
    classes_ |= 1u << static_cast<int>(r.op);
  }
  for (auto& [key, planes] : tables_)
    for (auto& [z, plane] : planes)
      std::sort(plane.begin(), plane.end(),
                [](const Series& a, const Series& b) { return a.y != b.y ? a.y < b.y : a.k < b.k; });
}

namespace {

constexpr double kSlack = 1e-12;  // a shape given as the row's, up to rounding

bool same(double a, double b) {
  return std::abs(a - b) <= kSlack * std::max(std::abs(a), std::abs(b));
}

// Linear interpolation in log v between two answers at v0 < v < v1; nullopt unless both answer.
std::optional<double> blend(std::optional<double> a, std::optional<double> b, double v, double v0,
                            double v1) {
  if (!a || !b) return std::nullopt;
  const double w = (std::log(v) - std::log(v0)) / (std::log(v1) - std::log(v0));
  return (1 - w) * *a + w * *b;
}

}  // namespace

// The log time per FLOP of series `s` at log x, inside its span (a series of one row: at its x only).
std::optional<double> KernelTables::along(const Series& s, double log_x) {
  const auto& xs = s.log_x;
  if (log_x < xs.front() - kSlack || log_x > xs.back() + kSlack) return std::nullopt;
  if (xs.size() == 1) return s.log_t_per_flop.front();
  const std::size_t above =
      static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), log_x) - xs.begin());
  const std::size_t hi = std::clamp<std::size_t>(above, 1, xs.size() - 1);
  const double u = std::clamp((log_x - xs[hi - 1]) / (xs[hi] - xs[hi - 1]), 0.0, 1.0);
  return (1 - u) * s.log_t_per_flop[hi - 1] + u * s.log_t_per_flop[hi];
}

// At the operation's y: its own series (a GEMM: its n and k; else the first with its y), or the two
// series around it.
std::optional<double> KernelTables::in_plane(const Plane& plane, const KernelOp& op) {
  const double log_x = std::log(op.x);
  const Series* at_y = nullptr;
  for (const Series& s : plane)
    if (same(s.y, op.y)) {
      if (same(s.k, op.k)) return along(s, log_x);
      if (!at_y) at_y = &s;
    }
  if (at_y) return along(*at_y, log_x);
  const auto above = std::find_if(plane.begin(), plane.end(), [&](const Series& s) { return s.y > op.y; });
  if (above == plane.begin() || above == plane.end()) return std::nullopt;
  const Series& below = *(above - 1);
  return blend(along(below, log_x), along(*above, log_x), op.y, below.y, above->y);
}

std::optional<double> KernelTables::in_z(const std::map<double, Plane>& planes, const KernelOp& op) {
  for (const auto& [z, plane] : planes)
    if (same(z, op.z)) return in_plane(plane, op);
  const auto above = planes.upper_bound(op.z);
  if (above == planes.begin() || above == planes.end()) return std::nullopt;
  const auto below = std::prev(above);
  return blend(in_plane(below->second, op), in_plane(above->second, op), op.z, below->first, above->first);
}

std::optional<double> KernelTables::seconds(const KernelOp& op) const {
  if (!(op.x > 0 && op.y > 0 && op.z > 0 && op.flops > 0)) return std::nullopt;
  const int c = static_cast<int>(op.op);
  // The most specific key first: the operation's heads, then its attention type, then any.
  for (const Key& key : {Key{c, op.attention, op.dtype, op.heads, op.kv_heads, op.head_dim},
                         Key{c, op.attention, op.dtype, op.heads, 0, 0},
                         Key{c, op.attention, op.dtype, 0, 0, 0}, Key{c, "", op.dtype, 0, 0, 0}}) {
    const auto it = tables_.find(key);
    if (it == tables_.end()) continue;
    if (const auto log_t = in_z(it->second, op)) return op.flops * std::exp(*log_t);
  }
  return std::nullopt;
}

std::string KernelTables::fingerprint() const {
  std::string text;
  for (const KernelRow& r : rows_)
    text += std::to_string(static_cast<int>(r.op)) + r.attention + r.dtype + std::to_string(r.heads) + "," +
            std::to_string(r.kv_heads) + "," + std::to_string(r.head_dim) + "," + shortest_number(r.x) + "," +
            shortest_number(r.y) + "," + shortest_number(r.z) + "," + shortest_number(r.k) + "," +
            shortest_number(r.flops) + "," + shortest_number(r.seconds) + ";";
  return std::to_string(rows_.size()) + ":" + std::to_string(std::hash<std::string>{}(text));
}

std::vector<KernelRow> read_kernel_rows(const std::string& path) {
  const std::string name = "kernel table '" + path + "'";
  const std::string text = read_input_file(path, name, "a CSV or a JSON array of kernel times");
  std::vector<KernelRow> rows;
  for (const TextRecord& r : text_records(text, name, "operation", kMaxRows))
    rows.push_back(kernel_row(r.fields, r.where));
  if (rows.empty()) throw InputError(name + ": no rows");
  return rows;
}

namespace {

std::map<std::string, std::shared_ptr<const KernelTables>>& loaded() {
  static std::map<std::string, std::shared_ptr<const KernelTables>> tables;
  return tables;
}

}  // namespace

void register_kernel_tables(const std::string& key, std::vector<KernelRow> rows) {
  loaded()[key] = std::make_shared<const KernelTables>(std::move(rows));
}

std::shared_ptr<const KernelTables> kernel_tables(const std::string& name) {
  static const auto none = std::make_shared<const KernelTables>();
  if (name.empty() || name == "none") return none;
  if (const auto it = loaded().find(name); it != loaded().end()) return it->second;
  std::vector<std::string> known{"none"};
  for (const auto& [builtin, rows] : builtin_kernel_tables()) {
    if (builtin == name) return loaded()[name] = std::make_shared<const KernelTables>(rows);
    known.push_back(builtin);
  }
  if (name.ends_with(".csv") || name.ends_with(".json"))
    return loaded()[name] = std::make_shared<const KernelTables>(read_kernel_rows(name));
  throw InputError("kernel_tables: " + unknown_name_message("kernel table", name, known) +
                   " (or a FILE.csv / FILE.json)");
}

}  // namespace ultrasim
