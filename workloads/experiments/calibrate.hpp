// Calibration: fitting a software stack's free terms to measured collective times. A log is nccl-tests
// text output (`all_reduce_perf` ...: the out-of-place time column), nccl-tests' JSON (`-J FILE.json`: each
// "results" entry's "size" and "out_of_place" "time"), or nccom-test's (`size(B) count(elems) type
// time(us) ...`). The fit is one protocol (launch latency L, step latency S, efficiency E) over the
// base stack's algorithms, by least squares on log time: minimise sum_i (ln model_i - ln measured_i)^2,
// model_i = L + min over the algorithms of their model_s at size i with S per transfer and the links at
// E of their rate (what `--algorithm auto` would run; or the one algorithm asked for). For a fixed E each
// algorithm's model is affine in S (its transfers on the critical path), so the fit evaluates two models
// per point and E, solves (L, S) by Levenberg-Marquardt, and searches E in [0.05, 1] (a grid, then golden
// sections).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/stack.hpp"

namespace ultrasim {

// The distinct sizes calibrate fits at most (rows of one size are merged into one point first).
inline constexpr std::size_t kMaxCalibrationSizes = 256;

struct MeasuredPoint {
  std::uint64_t bytes = 0;
  double time_s = 0;
  std::string source;  // "file:line", or "file:results[i]" in JSON (i from 0)
};

// The points of one log, in file order. A log whose first character that is not blank is '{' or '[' is
// read as nccl-tests' JSON, any other as text. Throws InputError naming the file when it holds no row of
// either text format, or is JSON that does not parse, is not an object or has no "results"; naming the
// row (file:line, file:results[i]) when its size or time does not parse, or a JSON entry lacks "size",
// "out_of_place" or its "time" (a run with -C 1 has "cpu_time" instead, and is refused). A text log whose
// header names its time columns "cputime" (-C 1) is refused naming that line; a log (text or JSON) whose
// nccl-tests rows do not all have the first row's type and redop (-d all, -o all) is refused naming the
// first row that differs and the types and ops seen.
std::vector<MeasuredPoint> read_measured_log(const std::string& path);

struct CalibrationRequest {
  std::string topology, collective = "allreduce", algorithm = "auto";
  std::string base_stack = "auto";                             // auto: the topology's default
  std::vector<std::pair<std::string, std::string>> overrides;  // --set
  std::vector<MeasuredPoint> points;
  std::vector<std::uint64_t> held_out;  // sizes kept out of the fit (reported apart)
};

struct CalibratedPoint {
  MeasuredPoint measured;
  bool held_out = false;
  double before_s = 0, after_s = 0;  // model_s under the base stack, and under the fitted one
  std::string before_algorithm, after_algorithm;
};

struct Calibration {
  Stack base, fitted;
  std::vector<CalibratedPoint> points;
  // exp(mean |ln(model / measured)|) - 1 over the fitted points and the held-out ones, before and after.
  double fit_before = 0, fit_after = 0, held_before = 0, held_after = 0;
};

// Throws InputError for a bad topology, collective, algorithm or stack, no point to fit, or a held-out
// size no point has.
Calibration calibrate(const CalibrationRequest& request);

}  // namespace ultrasim
