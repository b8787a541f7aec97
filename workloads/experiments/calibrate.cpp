#include "workloads/experiments/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/log.hpp"
#include "topology/base/progress.hpp"
#include "topology/base/units.hpp"
#include "workloads/collective/collective_job.hpp"

namespace ultrasim {

namespace {

std::vector<std::string> tokens_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

bool whole_number(const std::string& t) {
  return !t.empty() && t.size() < 20 &&
         std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A positive time in us, as the logs print it.
double time_us(const std::string& text, const std::string& where) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(v > 0) || !std::isfinite(v))
    throw InputError(where + ": time '" + text + "' is not a positive number of microseconds");
  if (v * 1e-6 > kMaxTime)
    throw InputError(where + ": time '" + text +
                     "' us is over 1e6 s; no collective of a log takes that long");
  return v;
}

// A row's size, at most 2^53 bytes as every size the simulator reads (topology/base/units.hpp).
std::uint64_t size_bytes(std::uint64_t bytes, const std::string& where) {
  return with_context(where, [&] { return checked_bytes(bytes); });
}

// A JSON value as it appears in the file, cut short: for messages that stay one line.
std::string shown(const nlohmann::json& value) {
  const std::string text = json_text(value);
  return text.size() <= 40 ? text : text.substr(0, 37) + "...";
}

// One nccl-tests row's datatype and reduction op (its `type` and `redop` columns), where it is.
struct RowKind {
  std::string where, type, redop;
};

// A column's word as a message shows it: as is when short and printable, else as a JSON string cut
// short (a newline or a long word would not keep the message one line).
std::string word(const std::string& text) {
  const bool plain = !text.empty() && text.size() <= 24 &&
                     std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < 127; });
  return plain ? text : shown(nlohmann::json(text));
}

// The values of `column` over `rows`, each once, in first-seen order, joined by ", ".
std::string distinct(const std::vector<RowKind>& rows, std::string RowKind::*column) {
  std::vector<std::string> seen;
  for (const RowKind& row : rows)
    if (std::find(seen.begin(), seen.end(), row.*column) == seen.end()) seen.push_back(row.*column);
  std::string out;
  for (const std::string& s : seen) out += (out.empty() ? "" : ", ") + word(s);
  return out;
}

// nccl-tests with -d all (every datatype) or -o all (every reduction op) sweeps the sizes once per type
// and op, in one table: each size appears once per pair, at different times. One fit takes one pair, so
// a log whose rows name more than one is refused at the first row that differs from the first.
void refuse_mixed_rows(const std::vector<RowKind>& rows) {
  for (const RowKind& row : rows) {
    if (row.type == rows.front().type && row.redop == rows.front().redop) continue;
    throw InputError(row.where + ": a row of " + word(row.type) + " " + word(row.redop) + " after rows of " +
                     word(rows.front().type) + " " + word(rows.front().redop) +
                     ": the log's rows name types " + distinct(rows, &RowKind::type) + " and ops " +
                     distinct(rows, &RowKind::redop) +
                     ", as nccl-tests -d all or -o all prints them (every size again per type and op), and "
                     "one fit takes one of each; rerun with one -d and one -o (e.g. -d float -o sum) or keep "
                     "one type's and op's rows");
  }
}

// nccl-tests' JSON, as `all_reduce_perf ... -J FILE.json` writes it (NVIDIA/nccl-tests src/util.cu:
// writeResultHeader opens the "results" list, writeBenchmarkLinePreamble/Body/Terminator write one entry
// per row): {"version": 3, ..., "results": [{"size": B, "count": n, "type": "float", "redop": "sum",
// "root": "    -1", "out_of_place": {"time": us, "alg_bw", "bus_bw", "nwrong"}, "in_place": {...},
// "actual_iterations": n, "experiment_name": ""}, ...], ...}. The text table's columns, as fields; a NaN
// is written as the string "nan", and with -C 1 the time's key is "cpu_time".
std::vector<MeasuredPoint> read_nccl_tests_json(const std::string& text, const std::string& path,
                                                const std::string& name) {
  nlohmann::json doc;
  try {
    doc = parse_json_input(text, name);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(name + " is not valid JSON: " + json_error_text(e));
  }
  if (!doc.is_object())
    throw InputError(name + " is JSON but not an object; nccl-tests -J writes one whose \"results\" list " +
                     "holds the rows");
  const auto results = doc.find("results");
  if (results == doc.end() || !results->is_array() || results->empty())
    throw InputError(name + " holds no results: nccl-tests -J JSON with a non-empty \"results\" list " +
                     "expected");
  std::vector<MeasuredPoint> points;
  std::vector<RowKind> kinds;
  for (std::size_t i = 0; i < results->size(); ++i) {
    const std::string where = path + ":results[" + std::to_string(i) + "]";
    const nlohmann::json& row = (*results)[i];
    const auto field = [&](const nlohmann::json& object, const std::string& key,
                           const std::string& shown_as) -> const nlohmann::json& {
      const auto it = object.find(key);
      if (it == object.end()) throw InputError(where + ": missing \"" + shown_as + "\"");
      return *it;
    };
    if (!row.is_object()) throw InputError(where + ": " + shown(row) + " is not a result object");
    const nlohmann::json& size = field(row, "size", "size");
    if (!size.is_number_unsigned())
      throw InputError(where + ": size " + shown(size) + " is not a whole number of bytes");
    const nlohmann::json& out_of_place = field(row, "out_of_place", "out_of_place");
    if (!out_of_place.is_object())
      throw InputError(where + ": out_of_place " + shown(out_of_place) + " is not an object");
    if (!out_of_place.contains("time") && out_of_place.contains("cpu_time"))
      throw InputError(where + ": out_of_place has \"cpu_time\", not \"time\": a run with -C 1 reports " +
                       "the CPU time to launch, not the collective's");
    const nlohmann::json& time = field(out_of_place, "time", "out_of_place.time");
    const double us = time.is_number() ? time.get<double>() : 0;
    if (!(us > 0) || !std::isfinite(us))
      throw InputError(where + ": out-of-place time " + shown(time) +
                       " is not a positive number of microseconds");
    if (us * 1e-6 > kMaxTime)
      throw InputError(where + ": out-of-place time " + shown(time) +
                       " us is over 1e6 s; no collective of a log takes that long");
    points.push_back({size_bytes(size.get<std::uint64_t>(), where), us * 1e-6, where});
    const auto type = row.find("type"), redop = row.find("redop");
    if (type != row.end() && type->is_string() && redop != row.end() && redop->is_string())
      kinds.push_back({where, type->get<std::string>(), redop->get<std::string>()});
  }
  refuse_mixed_rows(kinds);
  return points;
}

}  // namespace

std::vector<MeasuredPoint> read_measured_log(const std::string& path) {
  const std::string name = "measured log '" + path + "'";
  const std::string text =
      read_input_file(path, name, "nccl-tests output (its text, or its -J JSON) or nccom-test output");
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (text[first] == '{' || text[first] == '['))
    return read_nccl_tests_json(text, path, name);
  std::vector<MeasuredPoint> points;
  std::istringstream in(text);
  std::vector<RowKind> kinds;  // of the nccl-tests rows
  bool nccom = false;          // after nccom-test's "size(B) ... time(us)" header: the time is the 4th column
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.find("size(B)") != std::string::npos && line.find("time(us)") != std::string::npos) nccom = true;
    const auto t = tokens_of(line);
    const std::string where = path + ":" + std::to_string(number);
    // nccl-tests -C 1 heads its time columns "cputime" (src/common.cu, writeResultHeader): the CPU time
    // to launch the collective, not the collective's.
    if (!t.empty() && t[0][0] == '#' && std::find(t.begin(), t.end(), "cputime") != t.end())
      throw InputError(where + ": the time columns are \"cputime\", not \"time\": a run with -C 1 " +
                       "reports the CPU time to launch, not the collective's; rerun without -C 1");
    if (t.empty() || t[0][0] == '#' || !whole_number(t[0]) || t.size() < 2 || !whole_number(t[1])) continue;
    // nccl-tests: size count type redop root time algbw busbw #wrong (out-of-place), then in-place.
    if (!nccom && t.size() >= 9) {
      points.push_back({size_bytes(std::stoull(t[0]), where), time_us(t[5], where) * 1e-6, where});
      kinds.push_back({where, t[2], t[3]});
    }
    if (nccom && t.size() >= 4)
      points.push_back({size_bytes(std::stoull(t[0]), where), time_us(t[3], where) * 1e-6, where});
  }
  refuse_mixed_rows(kinds);
  if (points.empty())
    throw InputError(name +
                     " holds no result row of nccl-tests (size count type redop root time ...) or "
                     "nccom-test (size(B) count(elems) type time(us) ...)");
  return points;
}

namespace {

Stack one_protocol(const Stack& base, double launch, double step, double efficiency) {
  Stack s;
  s.name = base.name + "-calibrated";
  s.description =
      "one protocol fitted by ultrasim calibrate to measured times, over " + base.name + "'s algorithms";
  s.algorithms = base.algorithms, s.algorithms_source = base.algorithms_source;
  Protocol p;
  p.name = "fitted", p.launch_latency = launch, p.step_latency = step, p.efficiency = efficiency;
  p.network_step_latency = protocol_of(base, "auto").network_step_latency;  // not fitted: the bulk one's
  p.source = "ultrasim calibrate";
  s.protocols.push_back(p);
  return s;
}

// The job `request` describes at `bytes`, under `stack` (null: its --stack word, request.base_stack).
PreparedJob prepared(const CalibrationRequest& request, std::shared_ptr<const Stack> stack,
                     std::uint64_t bytes) {
  auto overrides = request.overrides;
  if (!stack) overrides.emplace_back("stack", request.base_stack);
  CollectiveJob job{request.topology, request.collective, request.algorithm, bytes, "float32", 0, overrides};
  job.stack = std::move(stack);
  return prepare(job);
}

// Per algorithm, its model_s at `bytes` under `stack` (with "auto": every candidate's, at its best
// protocol; otherwise the one asked for).
std::map<std::string, double> models(const CalibrationRequest& request, std::shared_ptr<const Stack> stack,
                                     std::uint64_t bytes) {
  const PreparedJob job = prepared(request, std::move(stack), bytes);
  std::map<std::string, double> out;
  if (job.auto_ranking.empty()) out[job.entry->name] = compute_metrics(job, 1).model_s;
  for (const AutoCandidate& c : job.auto_ranking)
    if (!out.count(c.algorithm) || c.model_s < out[c.algorithm]) out[c.algorithm] = c.model_s;
  return out;
}

// Affine per algorithm: model = m0 + k S (S in s).
struct Affine {
  double m0 = 0, k = 0;
};

struct Fit {
  double launch = 0, step = 0, cost = std::numeric_limits<double>::infinity();
};

// min over algorithms of (m0 + k S), and the k of the minimum.
std::pair<double, double> lowest(const std::vector<Affine>& algorithms, double step) {
  double best = std::numeric_limits<double>::infinity(), slope = 0;
  for (const Affine& a : algorithms)
    if (a.m0 + a.k * step < best) best = a.m0 + a.k * step, slope = a.k;
  return {best, slope};
}

// (L, S) >= 0 minimising sum (ln(L + lowest_i(S)) - ln t_i)^2, Levenberg-Marquardt in microseconds.
Fit fit_latencies(const std::vector<std::vector<Affine>>& points, const std::vector<double>& measured) {
  auto cost_of = [&](double L, double S) {
    double c = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const double r = std::log(L * 1e-6 + lowest(points[i], S * 1e-6).first) - std::log(measured[i]);
      c += r * r;
    }
    return c;
  };
  double L = 1, S = 1, lambda = 1e-3, cost = cost_of(L, S);
  for (int iteration = 0; iteration < 200; ++iteration) {
    double a = 0, b = 0, d = 0, gL = 0, gS = 0;  // J^T J = [[a, b], [b, d]], J^T r = (gL, gS)
    for (std::size_t i = 0; i < points.size(); ++i) {
      const auto [m, k] = lowest(points[i], S * 1e-6);
      const double model = L * 1e-6 + m, r = std::log(model) - std::log(measured[i]);
      const double jL = 1e-6 / model, jS = k * 1e-6 / model;
      a += jL * jL, b += jL * jS, d += jS * jS, gL += jL * r, gS += jS * r;
    }
    const double A = a * (1 + lambda) + 1e-12, D = d * (1 + lambda) + 1e-12, det = A * D - b * b;
    const double nL = std::max(0.0, L - (D * gL - b * gS) / det),
                 nS = std::max(0.0, S - (A * gS - b * gL) / det);
    const double next = cost_of(nL, nS);
    if (next < cost) {
      const bool done = cost - next < 1e-15 * (1 + cost);
      L = nL, S = nS, cost = next, lambda /= 3;
      if (done) break;
    } else {
      lambda *= 4;
      if (lambda > 1e12) break;
    }
  }
  return {L * 1e-6, S * 1e-6, cost};
}

double geomean_error(const std::vector<CalibratedPoint>& points, bool held_out, bool after) {
  double sum = 0;
  int n = 0;
  for (const CalibratedPoint& p : points)
    if (p.held_out == held_out)
      sum += std::abs(std::log((after ? p.after_s : p.before_s) / p.measured.time_s)), ++n;
  return n == 0 ? 0 : std::exp(sum / n) - 1;
}

}  // namespace

namespace {

// The efficiency of the best fit: `fit_at` over a grid of `grid` steps of 0.05, then `golden`
// golden-section steps around the grid's best; that efficiency and its fit.
std::pair<double, Fit> search_efficiency(const std::function<Fit(double)>& fit_at, int grid, int golden) {
  double best_e = 1;
  Fit best;
  for (int g = 1; g <= grid; ++g) {
    const Fit f = fit_at(g * 0.05);
    if (f.cost < best.cost) best = f, best_e = g * 0.05;
  }
  double lo = std::max(0.05, best_e - 0.05), hi = std::min(1.0, best_e + 0.05);
  const double phi = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
  Fit f1 = fit_at(x1), f2 = fit_at(x2);
  for (int i = 0; i < golden; ++i) {
    if (f1.cost <= f2.cost) {
      hi = x2, x2 = x1, f2 = f1, x1 = hi - phi * (hi - lo), f1 = fit_at(x1);
    } else {
      lo = x1, x1 = x2, f1 = f2, x2 = lo + phi * (hi - lo), f2 = fit_at(x2);
    }
  }
  const auto [e, fit] = f1.cost <= f2.cost ? std::pair{x1, f1} : std::pair{x2, f2};
  if (fit.cost < best.cost) best = fit, best_e = e;
  return {best_e, best};
}

// Rows of one size (a log of several runs, or logs given twice) are one point: the geometric mean of
// their times, with a warning. The fit then models each size once, however long the logs are.
std::vector<MeasuredPoint> merge_repeats(const std::vector<MeasuredPoint>& rows) {
  std::vector<MeasuredPoint> merged;
  std::map<std::uint64_t, std::pair<std::size_t, std::vector<double>>> of_size;  // index in merged, times
  for (const MeasuredPoint& row : rows) {
    auto [it, fresh] = of_size.try_emplace(row.bytes, merged.size(), std::vector<double>{});
    if (fresh) merged.push_back(row);
    it->second.second.push_back(row.time_s);
  }
  int repeated = 0;  // sizes given more than once: the first three are named, the rest counted
  for (auto& [bytes, entry] : of_size) {
    auto& [index, times] = entry;
    if (times.size() < 2) continue;
    ++repeated;
    double log_sum = 0;
    for (const double t : times) log_sum += std::log(t);
    const auto [least, most] = std::minmax_element(times.begin(), times.end());
    merged[index].time_s = std::exp(log_sum / static_cast<double>(times.size()));
    merged[index].source += " and " + std::to_string(times.size() - 1) + " more row(s) of this size";
    if (repeated <= 3)
      logger().warn("calibrate: {} rows of {} bytes ({} to {} us): fitted on their geometric mean, {} us",
                    times.size(), bytes, fixed_text(*least * 1e6, 2), fixed_text(*most * 1e6, 2),
                    fixed_text(merged[index].time_s * 1e6, 2));
  }
  if (repeated > 3)
    logger().warn("calibrate: and {} more sizes given more than once, each fitted on its geometric mean",
                  repeated - 3);
  if (merged.size() > kMaxCalibrationSizes)
    throw InputError("calibrate: the logs hold " + std::to_string(merged.size()) +
                     " distinct sizes; at most " + std::to_string(kMaxCalibrationSizes) +
                     " are fitted (a log of nccl-tests from 8 B to 16 GiB " + "by x2 has 32)");
  return merged;
}

}  // namespace

Calibration calibrate(const CalibrationRequest& original) {
  CalibrationRequest request = original;
  request.points = merge_repeats(original.points);
  Calibration out;
  out.base = *prepared(request, nullptr, 1024).stack;  // the one named, or the topology's default
  for (std::uint64_t size : request.held_out)
    if (std::none_of(request.points.begin(), request.points.end(),
                     [&](const MeasuredPoint& p) { return p.bytes == size; }))
      throw InputError("--hold-out " + std::to_string(size) + ": no measured point has that size");
  std::vector<MeasuredPoint> fitted;
  for (const MeasuredPoint& p : request.points) {
    const bool held =
        std::find(request.held_out.begin(), request.held_out.end(), p.bytes) != request.held_out.end();
    CalibratedPoint point;
    point.measured = p, point.held_out = held;
    out.points.push_back(point);
    if (!held) fitted.push_back(p);
  }
  if (fitted.empty()) throw InputError("calibrate: every measured point is held out; nothing to fit");
  if (fitted.size() < 3)
    logger().warn(
        "calibrate: {} fitted size(s) for three unknowns (launch and step latency, efficiency): "
        "the fit is under-determined; a log of more sizes pins it down",
        fitted.size());

  std::vector<double> measured;
  for (const MeasuredPoint& p : fitted) measured.push_back(p.time_s);
  // The efficiency: a grid of kGrid steps of 0.05, then kGolden golden-section steps around the best.
  constexpr int kGrid = 20, kGolden = 24;
  Progress progress("calibrate: points modelled", (kGrid + 2 + kGolden) * fitted.size() + out.points.size());
  // For one efficiency, the best (L, S) and its cost.
  auto fit_at = [&](double efficiency) {
    const auto zero = std::make_shared<const Stack>(one_protocol(out.base, 0, 0, efficiency));
    const auto unit = std::make_shared<const Stack>(one_protocol(out.base, 0, 1e-6, efficiency));
    std::vector<std::vector<Affine>> points;
    for (const MeasuredPoint& p : fitted) {
      const auto m0 = models(request, zero, p.bytes), m1 = models(request, unit, p.bytes);
      std::vector<Affine> affine;
      for (const auto& [algorithm, t0] : m0) affine.push_back({t0, (m1.at(algorithm) - t0) / 1e-6});
      points.push_back(std::move(affine));
      progress.advance();
    }
    return fit_latencies(points, measured);
  };
  const auto [best_e, best] = search_efficiency(fit_at, kGrid, kGolden);

  out.fitted = one_protocol(out.base, best.launch, best.step, best_e);
  std::ostringstream source;
  source << "ultrasim calibrate on " << request.topology << ": least squares on log time over "
         << fitted.size() << " measured point(s), " << request.held_out.size() << " size(s) held out";
  out.fitted.protocols.front().source = source.str();
  const auto fitted_stack = std::make_shared<const Stack>(out.fitted);
  for (CalibratedPoint& p : out.points) {
    // What auto (or the algorithm asked for) runs: the job's algorithm and model_s.
    const PreparedJob before = prepared(request, nullptr, p.measured.bytes),
                      after = prepared(request, fitted_stack, p.measured.bytes);
    p.before_s = compute_metrics(before, 1).model_s, p.before_algorithm = before.entry->name;
    p.after_s = compute_metrics(after, 1).model_s, p.after_algorithm = after.entry->name;
    progress.advance();
  }
  out.fit_before = geomean_error(out.points, false, false),
  out.fit_after = geomean_error(out.points, false, true);
  out.held_before = geomean_error(out.points, true, false),
  out.held_after = geomean_error(out.points, true, true);
  return out;
}

}  // namespace ultrasim
