#include "workloads/serving/chip_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {
namespace {

constexpr std::size_t kMaxPoints = 20000;
const std::vector<std::string> kOperations{"gemm", "grouped_gemm", "prefill_attention", "decode_attention",
                                           "memory"};

double real_field(const std::string& text, const std::string& where, const std::string& field) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(x) || x < 0 || x > 1e30)
    throw InputError(where + ": field '" + field + "' must be a finite number >= 0, not '" + text + "'");
  return x;
}

// One point from its fields (CSV cells or JSON values as text).
KernelPoint make_point(const std::map<std::string, std::string>& f, const std::string& where) {
  auto get = [&](const std::string& k) -> const std::string* {
    const auto it = f.find(k);
    return it == f.end() || it->second.empty() ? nullptr : &it->second;
  };
  auto number = [&](const std::string& k) { return real_field(*get(k), where, k); };
  KernelPoint p;
  if (!get("operation")) throw InputError(where + ": missing field 'operation'");
  p.operation = *get("operation");
  if (std::find(kOperations.begin(), kOperations.end(), p.operation) == kOperations.end())
    throw InputError(where + ": " + unknown_name_message("operation", p.operation, kOperations));
  if (!get("seconds")) throw InputError(where + ": missing field 'seconds'");
  p.seconds = number("seconds");
  if (!(p.seconds > 0 && p.seconds <= 1e3))
    throw InputError(where + ": field 'seconds' must be in (0, 1000]");
  const bool gemm = p.operation == "gemm" || p.operation == "grouped_gemm";
  const bool attention = p.operation.ends_with("attention");
  ChipWork& w = p.work;
  w.gemm_dtype = w.attention_dtype = get("dtype") ? *get("dtype") : (gemm ? "float8" : "bfloat16");
  with_context(where + ", field 'dtype'", [&] { return dtype_bits(w.gemm_dtype); });
  w.decode = p.operation == "decode_attention";
  w.kernels = 1;
  if (get("kernels")) {
    const double k = number("kernels");
    if (k != std::floor(k) || k < 0 || k > 1e6)
      throw InputError(where + ": field 'kernels' must be a whole number in [0, 1000000]");
    w.kernels = static_cast<int>(k);
  }
  if (gemm && get("m") && get("n") && get("k")) {
    const double m = number("m"), n = number("n"), k = number("k");
    const double g = p.operation == "grouped_gemm" && get("groups") ? number("groups") : 1;
    if (m < 1 || n < 1 || k < 1 || g < 1)
      throw InputError(where + ": a GEMM's m, n, k and groups must be >= 1");
    w.gemm_flops = g * 2 * m * n * k;
    w.bytes = g * ((m * k + n * k) * dtype_bytes(w.gemm_dtype) + m * n * 2);
    w.rows = m;
  } else {
    const double flops = get("flops") ? number("flops") : 0;
    if (gemm) w.gemm_flops = flops, w.rows = get("rows") ? number("rows") : 0;
    if (attention) w.attention_flops = flops;
    w.bytes = get("bytes") ? number("bytes") : 0;
    if (gemm && (flops <= 0 || w.rows < 1))
      throw InputError(where + ": a GEMM needs m, n and k, or flops and rows");
    if (attention && flops <= 0) throw InputError(where + ": an attention point needs its flops");
    if (p.operation == "memory" && w.bytes <= 0) throw InputError(where + ": a memory point needs its bytes");
  }
  if (get("role")) {
    if (*get("role") != "fit" && *get("role") != "held-out")
      throw InputError(where + ": field 'role' must be fit or held-out");
    p.held_out = *get("role") == "held-out";
  }
  p.source = get("source") ? *get("source") : "";
  return p;
}

std::string json_cell(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// The dtype of a Kineto operator's input `a` ("Input type": "c10::Float8_e4m3fn", "float", "c10::Half",
// ...); bfloat16 when it says none.
std::string kineto_dtype(const nlohmann::json& types, std::size_t a) {
  if (!types.is_array() || types.size() <= a || !types[a].is_string()) return "bfloat16";
  const std::string t = types[a].get<std::string>();
  return t.find("Float8") != std::string::npos ? "float8"
         : t == "float"                        ? "float32"
         : t.find("Half") != std::string::npos ? "float16"
                                               : "bfloat16";
}

// Kineto: GEMM operators with their shapes and the GPU time of the kernels they launched; memcpy/memset.
std::vector<KernelPoint> kineto_points(const nlohmann::json& trace, const std::string& where, int& skipped) {
  const nlohmann::json& events = trace["traceEvents"];
  if (!events.is_array()) throw InputError(where + ": 'traceEvents' must be an array");
  std::map<long long, double> kernel_us;  // External id (or correlation) -> summed kernel time
  std::map<long long, int> kernel_count;
  std::vector<KernelPoint> out;
  for (const auto& e : events) {
    if (!e.is_object() || e.value("ph", "") != "X" || !e.contains("dur") || !e["dur"].is_number()) continue;
    const std::string cat = e.value("cat", "");
    const nlohmann::json args = e.value("args", nlohmann::json::object());
    if (cat == "kernel") {
      const long long id = args.value("External id", args.value("correlation", -1LL));
      kernel_us[id] += e["dur"].get<double>(), ++kernel_count[id];
    } else if ((cat == "gpu_memcpy" || cat == "gpu_memset") && args.contains("bytes") &&
               args["bytes"].is_number() && e["dur"].get<double>() > 0) {
      out.push_back(make_point({{"operation", "memory"},
                                {"seconds", json_cell(e["dur"].get<double>() * 1e-6)},
                                {"bytes", json_cell(args["bytes"])},
                                {"source", e.value("name", cat)}},
                               where + ", event '" + e.value("name", cat) + "'"));
    }
  }
  for (const auto& e : events) {
    if (!e.is_object() || e.value("cat", "") != "cpu_op") continue;
    const std::string name = e.value("name", "");
    const nlohmann::json args = e.value("args", nlohmann::json::object());
    const long long id = args.value("External id", -1LL);
    if (!kernel_us.count(id)) continue;  // launched nothing on the GPU (or a parent of the op that did)
    const bool gemm =
        name == "aten::mm" || name == "aten::addmm" || name == "aten::bmm" || name == "aten::_scaled_mm";
    const nlohmann::json dims = args.value("Input Dims", nlohmann::json::array());
    // mm / _scaled_mm: [[M, K], [K, N], ...]; addmm: [[bias], [M, K], [K, N]]; bmm: [[B, M, K], [B, K, N]].
    const std::size_t a = name == "aten::addmm" ? 1 : 0;
    const std::size_t rank = name == "aten::bmm" ? 3 : 2;
    if (!gemm || !dims.is_array() || dims.size() < a + 2 || !dims[a].is_array() || dims[a].size() != rank ||
        !dims[a + 1].is_array() || dims[a + 1].size() != rank) {
      ++skipped;
      continue;
    }
    const std::string dtype = kineto_dtype(args.value("Input type", nlohmann::json::array()), a);
    const std::size_t o = rank - 2;
    std::map<std::string, std::string> f{{"operation", rank == 3 ? "grouped_gemm" : "gemm"},
                                         {"seconds", json_cell(kernel_us[id] * 1e-6)},
                                         {"m", json_cell(dims[a][o])},
                                         {"k", json_cell(dims[a][o + 1])},
                                         {"n", json_cell(dims[a + 1][o + 1])},
                                         {"dtype", dtype},
                                         {"kernels", std::to_string(kernel_count[id])},
                                         {"source", name}};
    if (rank == 3) f["groups"] = json_cell(dims[a][0]);
    out.push_back(
        make_point(f, where + ", operation '" + name + "' (External id " + std::to_string(id) + ")"));
  }
  return out;
}

double log_error(double model, double measured) {
  return std::log(model / measured);
}

double geomean_error(const std::vector<ChipFitPoint>& points, bool held_out, bool after) {
  double sum = 0;
  int n = 0;
  for (const auto& p : points)
    if (p.point.held_out == held_out)
      sum += std::abs(log_error(after ? p.after_s : p.before_s, p.point.seconds)), ++n;
  return n == 0 ? 0 : std::exp(sum / n) - 1;
}

struct Bound {
  std::string name;
  double lo, hi;
  bool log_scale;
};

// Nelder-Mead from `start` (steps `step` along each axis), at most `iterations`: the best point.
template <class F>
std::vector<double> nelder_mead(F&& f, std::vector<double> start, double step, int iterations) {
  const std::size_t n = start.size();
  std::vector<std::vector<double>> x(n + 1, start);
  for (std::size_t i = 0; i < n; ++i) x[i + 1][i] += step;
  std::vector<double> y(n + 1);
  for (std::size_t i = 0; i <= n; ++i) y[i] = f(x[i]);
  for (int it = 0; it < iterations; ++it) {
    std::vector<std::size_t> order(n + 1);
    for (std::size_t i = 0; i <= n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return y[a] < y[b]; });
    const std::size_t best = order.front(), worst = order.back(), second = order[n - 1];
    if (y[worst] - y[best] < 1e-14) break;
    std::vector<double> centre(n, 0);
    for (std::size_t i = 0; i <= n; ++i)
      if (i != worst)
        for (std::size_t d = 0; d < n; ++d) centre[d] += x[i][d] / static_cast<double>(n);
    auto along = [&](double t) {
      std::vector<double> p(n);
      for (std::size_t d = 0; d < n; ++d) p[d] = centre[d] + t * (x[worst][d] - centre[d]);
      return p;
    };
    const auto r = along(-1);
    const double fr = f(r);
    if (fr < y[best]) {
      const auto e = along(-2);
      const double fe = f(e);
      if (fe < fr)
        x[worst] = e, y[worst] = fe;
      else
        x[worst] = r, y[worst] = fr;
    } else if (fr < y[second]) {
      x[worst] = r, y[worst] = fr;
    } else {
      const auto c = along(fr < y[worst] ? -0.5 : 0.5);
      const double fc = f(c);
      if (fc < std::min(fr, y[worst])) {
        x[worst] = c, y[worst] = fc;
      } else {  // shrink towards the best
        for (std::size_t i = 0; i <= n; ++i)
          if (i != best) {
            for (std::size_t d = 0; d < n; ++d) x[i][d] = x[best][d] + 0.5 * (x[i][d] - x[best][d]);
            y[i] = f(x[i]);
          }
      }
    }
  }
  return x[static_cast<std::size_t>(std::min_element(y.begin(), y.end()) - y.begin())];
}

// The parameters the fitted points inform, with their ranges (efficiencies searched by their logarithm).
std::vector<Bound> free_parameters(const std::vector<KernelPoint>& points) {
  std::map<std::string, bool> informs;
  for (const auto& p : points) {
    if (p.held_out) continue;
    const bool gemm = p.work.gemm_flops > 0;
    informs["compute_efficiency"] |= gemm;
    informs["gemm_half_rows"] |= gemm;
    informs["hbm_efficiency"] |= p.work.bytes > 0;
    informs["kernel_overhead"] |= p.work.kernels > 0;
    informs["prefill_attention_efficiency"] |= p.operation == "prefill_attention";
    informs["decode_attention_efficiency"] |= p.operation == "decode_attention";
  }
  const std::vector<Bound> all{{"compute_efficiency", 0.01, 1, true},
                               {"gemm_half_rows", 0, 8192, false},
                               {"hbm_efficiency", 0.01, 1, true},
                               {"kernel_overhead", 0, 100e-6, false},
                               {"prefill_attention_efficiency", 0.01, 1, true},
                               {"decode_attention_efficiency", 0.01, 1, true}};
  std::vector<Bound> free;
  for (const auto& b : all)
    if (informs[b.name]) free.push_back(b);
  return free;
}

using ParamValues = std::map<std::string, double>;

// The values of `free` that minimise `loss`, from `x`: Nelder-Mead (efficiencies by their logarithm, rows
// and times by log(1 + x)), restarted from its best with smaller steps, then coordinate descent, each
// parameter by golden section over its range.
template <class Loss>
ParamValues minimise(Loss&& loss, const std::vector<Bound>& free, ParamValues x) {
  auto scale = [](const Bound& b) { return b.name == "kernel_overhead" ? 1e-6 : 1.0; };
  auto from_u = [&](const std::vector<double>& u) {
    auto y = x;
    for (std::size_t i = 0; i < free.size(); ++i) {
      const Bound& b = free[i];
      const double v = b.log_scale ? std::exp(u[i]) : std::expm1(u[i]) * scale(b);
      y[b.name] = std::clamp(v, b.lo, b.hi);
    }
    return y;
  };
  std::vector<double> u;
  for (const auto& b : free)
    u.push_back(b.log_scale ? std::log(x[b.name]) : std::log1p(x[b.name] / scale(b)));
  for (const double step : {0.7, 0.2, 0.05})
    u = nelder_mead([&](const auto& v) { return loss(from_u(v)); }, u, step, 2000);
  if (!free.empty() && loss(from_u(u)) < loss(x)) x = from_u(u);
  double best = loss(x);
  for (int sweep = 0; sweep < 40; ++sweep) {
    const double start = best;
    for (const auto& b : free) {
      auto to = [&](double v) { return b.log_scale ? std::exp(v) : v; };
      double lo = b.log_scale ? std::log(b.lo) : b.lo, hi = b.log_scale ? std::log(b.hi) : b.hi;
      const double g = (std::sqrt(5.0) - 1) / 2;
      auto at = [&](double v) {
        auto y = x;
        y[b.name] = to(v);
        return loss(y);
      };
      double c = hi - g * (hi - lo), d = lo + g * (hi - lo), fc = at(c), fd = at(d);
      for (int i = 0; i < 60; ++i) {
        if (fc < fd)
          hi = d, d = c, fd = fc, c = hi - g * (hi - lo), fc = at(c);
        else
          lo = c, c = d, fc = fd, d = lo + g * (hi - lo), fd = at(d);
      }
      if (const double f = at((lo + hi) / 2); f < best) best = f, x[b.name] = to((lo + hi) / 2);
    }
    if (start - best < 1e-12) break;
  }
  return x;
}

// Every parameter for the profile file: the base's values, the overrides, the fitted ones (`x`), each
// with its source.
std::vector<ChipValue> fitted_values(const ParamSet& params, const ChipProfile& base,
                                     const std::vector<std::pair<std::string, std::string>>& overrides,
                                     const ParamValues& x, const std::string& fitted_source) {
  std::vector<ChipValue> values;
  for (const ParamSpec& spec : params.specs()) {
    ChipValue v{spec.name, params.text(spec.name), spec.source};
    for (const ChipValue& b : base.values)
      if (b.name == spec.name) v.source = b.source;
    for (const auto& [name, text] : overrides)
      if (name == spec.name) v.source = "--set";
    if (const auto it = x.find(spec.name); it != x.end()) {
      v.value = spec.unit == Unit::kTime ? fixed_text(it->second * 1e6, 4) + "us" : fixed_text(it->second, 4);
      v.source = fitted_source;
    }
    values.push_back(v);
  }
  return values;
}

}  // namespace

std::vector<KernelPoint> read_kernel_points(const std::string& path) {
  const std::string where = "kernel times '" + path + "'";
  const std::string text =
      read_input_file(path, "kernel times '" + path + "'", "a CSV, a JSON array or a Kineto trace");
  std::vector<KernelPoint> out;
  int skipped = 0;
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (text[first] == '[' || text[first] == '{')) {
    const nlohmann::json j = parse_json_text(text, where);
    if (j.is_object() && j.contains("traceEvents")) {
      out = kineto_points(j, where, skipped);
      if (out.size() > kMaxPoints)
        throw InputError(where + ": more than " + std::to_string(kMaxPoints) +
                         " points (merge or sample them)");
    } else {
      if (!j.is_array())
        throw InputError(where + ": expected a JSON array of points or a Kineto trace with 'traceEvents'");
      for (const TextRecord& r : text_records(text, where, "operation", kMaxPoints))
        out.push_back(make_point(r.fields, r.where));
    }
  } else {
    for (const TextRecord& r : text_records(text, where, "operation", kMaxPoints))
      out.push_back(make_point(r.fields, r.where));
  }
  if (out.empty())
    throw InputError(where + ": no kernel times" +
                     (skipped > 0 ? " (" + std::to_string(skipped) + " trace operations without a GEMM shape)"
                                  : std::string()));
  return out;
}

ChipFit fit_chip(const ChipProfile& base, std::vector<KernelPoint> points, int hold_out_every,
                 const std::vector<std::pair<std::string, std::string>>& overrides, const std::string& from) {
  ChipFit fit;
  fit.base = base;
  if (hold_out_every > 0)
    for (std::size_t i = 0; i < points.size(); ++i)
      if ((i + 1) % static_cast<std::size_t>(hold_out_every) == 0) points[i].held_out = true;
  if (std::none_of(points.begin(), points.end(), [](const auto& p) { return !p.held_out; }))
    throw InputError("calibrate-chip: every point is held out; nothing is left to fit");
  const std::vector<Bound> free = free_parameters(points);
  for (const auto& b : free) fit.parameters.push_back(b.name);

  ParamSet params(serving_params());
  for (const ChipValue& v : base.values) params.apply({{v.name, v.value}});
  params.apply(overrides);
  // The profile's own dtypes first: a point the chip cannot run is an error, not a bad fit.
  const ChipModel before(params);
  for (const auto& p : points) {
    before.check_dtype(p.work.gemm_dtype, "a point's dtype on " + base.name);
    fit.points.push_back({p, before.time(p.work).seconds(), 0});
  }
  auto model_with = [&](const ParamValues& values) {
    ParamSet p = params;
    for (const auto& [name, v] : values) p.apply({{name, fixed_text(v, 12)}});
    return ChipModel(p);
  };
  auto loss = [&](const ParamValues& values) {  // mean squared log error over the fitted points
    const ChipModel m = model_with(values);
    double sum = 0;
    int n = 0;
    for (const auto& p : fit.points)
      if (!p.point.held_out) {
        const double e = log_error(m.time(p.point.work).seconds(), p.point.seconds);
        sum += e * e, ++n;
      }
    return sum / n;
  };
  ParamValues start;
  for (const auto& b : free) start[b.name] = params.number(b.name);
  const ParamValues x = minimise(loss, free, start);

  const ChipModel after = model_with(x);
  for (auto& p : fit.points) p.after_s = after.time(p.point.work).seconds();
  fit.fit_before = geomean_error(fit.points, false, false);
  fit.fit_after = geomean_error(fit.points, false, true);
  fit.held_before = geomean_error(fit.points, true, false);
  fit.held_after = geomean_error(fit.points, true, true);
  fit.fitted = base;
  fit.fitted.name = base.name + "-fitted";
  fit.fitted.description = base.description + ", fitted on " + from;
  fit.fitted.topologies.clear();
  fit.fitted.values =
      fitted_values(params, base, overrides, x,
                    "fitted: " + from + " (" + std::to_string(points.size()) + " points, held-out error " +
                        fixed_text(100 * fit.held_after, 1) + " %)");
  return fit;
}

}  // namespace ultrasim
