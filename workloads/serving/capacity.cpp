#include "workloads/serving/capacity.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "workloads/workload_metrics.hpp"

namespace ultrasim {

void CapacityOptions::validate() const {
  if (!(attainment > 0 && attainment <= 1))
    throw InputError("--attainment must be a share of requests in (0, 1], not " +
                     shortest_number(attainment));
  if (attainment_of != "both" && attainment_of != "each")
    throw InputError(
        "--attainment-of must be both (of requests within both SLOs) or each (each SLO's "
        "percentile), not '" +
        attainment_of + "'");
  if (!(precision > 0 && precision <= 1))
    throw InputError("--capacity-precision must be a relative precision in (0, 1], not " +
                     shortest_number(precision));
  if (window != 0 && (window < 100 || window > (1u << 22)))
    throw InputError(
        "--window-requests must be between 100 and 4194304 (or 0: " + std::to_string(kDefaultWindow) + ")");
}

const CapacityTrial& CapacityResult::at_capacity() const {
  for (const CapacityTrial& t : curve)
    if (t.rate == rate) return t;
  return curve.front();
}

TraceShape generated_shape(RequestGenerator generator) {
  return [generator](double rate, std::uint64_t count) mutable {
    generator.rate = rate, generator.count = count;
    return generate_requests(generator);
  };
}

TraceShape trace_shape(std::vector<ServingRequest> trace) {
  const double span = trace.size() < 2 ? 0 : trace.back().arrival_s - trace.front().arrival_s;
  if (!(span > 0))
    throw InputError(
        "a capacity search rescales the trace's arrivals to each rate: it needs two requests "
        "at different times");
  const double gap = span / static_cast<double>(trace.size() - 1);  // seconds between arrivals, mean
  return [trace, span, gap](double rate, std::uint64_t count) {
    const double scale = gap * rate;  // the trace's seconds per second at `rate`
    std::vector<ServingRequest> out;
    out.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      ServingRequest r = trace[i % trace.size()];
      const double copy = static_cast<double>(i / trace.size());
      r.arrival_s = (r.arrival_s - trace.front().arrival_s + copy * (span + gap)) / scale;
      out.push_back(r);
    }
    return out;
  };
}

namespace {

// Least-squares slope of y against x.
double slope(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
  mx /= static_cast<double>(x.size()), my /= static_cast<double>(x.size());
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
  return sxx > 0 ? sxy / sxx : 0;
}

// The standard error of the mean of `within` (0/1 per request, in arrival order) from 20 batch means:
// the requests of a queue are not independent, consecutive ones wait alike.
double batch_means_error(const std::vector<double>& within) {
  constexpr std::size_t kBatches = 20;
  const std::size_t n = within.size() / kBatches;
  if (n == 0) return 0;
  std::vector<double> means(kBatches, 0);
  for (std::size_t b = 0; b < kBatches; ++b) {
    for (std::size_t i = b * n; i < (b + 1) * n; ++i) means[b] += within[i];
    means[b] /= static_cast<double>(n);
  }
  double mean = 0, var = 0;
  for (const double m : means) mean += m;
  mean /= kBatches;
  for (const double m : means) var += (m - mean) * (m - mean);
  return std::sqrt(var / (kBatches - 1) / kBatches);
}

}  // namespace

TrialSize trial_size(const CapacityOptions& o, double rate, double e0) {
  const double lifetimes = std::ceil(rate * e0);  // requests arriving in one unloaded lifetime
  const double window = std::min(
      std::max(static_cast<double>(o.window > 0 ? o.window : kDefaultWindow), kWindowLifetimes * lifetimes),
      static_cast<double>(kMaxWindow));
  const double warm = std::clamp(kWarmLifetimes * lifetimes, window / 4, 2 * window);
  return {static_cast<std::uint64_t>(warm), static_cast<std::uint64_t>(window)};
}

CapacityTrial capacity_trial(const TraceShape& shape, const Deployment& serve, const CapacityOptions& o,
                             double rate, double e0, double saturated) {
  const auto [warm, window] = trial_size(o, rate, e0);
  const std::vector<ServingRequest> requests = shape(rate, warm + window + warm);
  const ServingSchedule s = serve(requests);

  CapacityTrial t;
  t.rate = rate, t.requests = requests.size(), t.measured = window;
  t.window_start_s = requests[warm].arrival_s, t.window_end_s = requests[warm + window - 1].arrival_s;
  std::vector<double> ttft, tpot, both, in_ttft, in_tpot;
  for (std::uint64_t i = warm; i < warm + window; ++i) {
    const RequestTimes& r = s.requests[i];
    const double first = r.first_token_s - r.arrival_s;
    const double per_token =
        requests[i].output > 1 ? (r.finish_s - r.first_token_s) / static_cast<double>(requests[i].output - 1)
                               : 0;
    ttft.push_back(first);
    if (requests[i].output > 1) tpot.push_back(per_token);
    const bool a = o.slo_ttft == 0 || first <= o.slo_ttft, b = o.slo_tpot == 0 || per_token <= o.slo_tpot;
    in_ttft.push_back(a), in_tpot.push_back(b), both.push_back(a && b);
    t.output_tokens += static_cast<double>(requests[i].output);
  }
  auto share = [&](const std::vector<double>& v) {
    double sum = 0;
    for (const double x : v) sum += x;
    return sum / static_cast<double>(v.size());
  };
  t.attainment = share(both), t.ttft_attainment = share(in_ttft), t.tpot_attainment = share(in_tpot);
  const bool each = o.attainment_of == "each";
  const bool ttft_binds = t.ttft_attainment <= t.tpot_attainment;
  t.margin =
      each ? std::min(t.ttft_attainment, t.tpot_attainment) - o.attainment : t.attainment - o.attainment;
  t.margin_error = batch_means_error(each ? (ttft_binds ? in_ttft : in_tpot) : both);
  std::sort(ttft.begin(), ttft.end()), std::sort(tpot.begin(), tpot.end());
  t.p50_ttft_s = percentile_of_sorted(ttft, 0.5), t.p90_ttft_s = percentile_of_sorted(ttft, 0.9);
  t.p99_ttft_s = percentile_of_sorted(ttft, 0.99);
  if (!tpot.empty())
    t.p50_tpot_s = percentile_of_sorted(tpot, 0.5), t.p90_tpot_s = percentile_of_sorted(tpot, 0.9),
    t.p99_tpot_s = percentile_of_sorted(tpot, 0.99);

  // Requests waiting for their first token just after each measured arrival, and their trend over the
  // window (those decoding are not counted: their number follows the lengths drawn, not the load).
  std::vector<double> first;
  for (const RequestTimes& r : s.requests) first.push_back(r.first_token_s);
  std::sort(first.begin(), first.end());
  std::vector<double> at, waiting;
  for (std::uint64_t i = warm; i < warm + window; ++i) {
    const double time = requests[i].arrival_s;
    const auto served = std::upper_bound(first.begin(), first.end(), time) - first.begin();
    at.push_back(time), waiting.push_back(static_cast<double>(i + 1) - static_cast<double>(served));
  }
  t.queue_growth = slope(at, waiting) * (t.window_end_s - t.window_start_s);
  const double n = static_cast<double>(window);
  t.sustained = rate <= saturated && t.queue_growth <= std::max(kQueueGrowth * n, kQueueNoise * std::sqrt(n));

  // What failed: each SLO whose own share is short (with "both" and neither short alone: the two).
  std::vector<std::string> fails;
  if (t.margin < 0) {
    if (t.ttft_attainment < o.attainment) fails.push_back("ttft");
    if (t.tpot_attainment < o.attainment) fails.push_back("tpot");
    if (fails.empty()) fails = {"ttft", "tpot"};
  }
  if (!t.sustained) fails.push_back("queue");
  for (const std::string& f : fails) t.fails += (t.fails.empty() ? "" : "+") + f;
  t.meets = t.sustained && t.margin >= 0;
  return t;
}

double saturated_rate(const TraceShape& shape, const Deployment& serve, std::uint64_t count) {
  for (int attempt = 0; attempt < 3; ++attempt, count *= 2) {
    const std::vector<ServingRequest> requests = shape(1e9, count);  // all at once
    const ServingSchedule s = serve(requests);
    std::vector<double> finish;
    double backlog_s = 0;  // when the last request got its first token: the queue was never empty before
    for (const RequestTimes& r : s.requests)
      finish.push_back(r.finish_s), backlog_s = std::max(backlog_s, r.first_token_s);
    std::sort(finish.begin(), finish.end());
    const std::size_t from = count / 4;
    std::size_t to = 3 * count / 4;
    while (to > from && finish[to] > backlog_s) --to;
    // Completions as fast as the requests "arrived" (1e9/s): it kept up, no saturation to measure.
    if (to - from >= count / 8 && finish[to] > finish[from]) {
      const double rate = static_cast<double>(to - from) / (finish[to] - finish[from]);
      return rate < 1e8 ? rate : std::numeric_limits<double>::infinity();
    }
  }
  return std::numeric_limits<double>::infinity();
}

namespace {

// The rate at which the margin, read off the curve by linear interpolation, crosses `level`: the first
// crossing above `from` going up (or below it going down); `from` if it never does.
double crossing(const std::vector<CapacityTrial>& curve, double from, double level, bool up) {
  std::vector<const CapacityTrial*> pts;
  for (const CapacityTrial& t : curve)
    if (up ? t.rate >= from : t.rate <= from) pts.push_back(&t);
  if (!up) std::reverse(pts.begin(), pts.end());
  for (std::size_t i = 1; i < pts.size(); ++i) {
    const double m0 = pts[i - 1]->margin, m1 = pts[i]->margin;
    if ((m0 - level) * (m1 - level) <= 0 && m0 != m1)
      return pts[i - 1]->rate + (level - m0) / (m1 - m0) * (pts[i]->rate - pts[i - 1]->rate);
  }
  return from;
}

}  // namespace

CapacityResult find_capacity(const TraceShape& shape, const Deployment& serve, const CapacityOptions& o,
                             const std::function<void(const CapacityTrial&)>& on_trial) {
  o.validate();
  CapacityResult out;
  // The unloaded latency: the trace's mean request alone.
  {
    double prompt = 0, output = 0;
    const std::vector<ServingRequest> sample = shape(1, 1000);
    for (const ServingRequest& r : sample)
      prompt += static_cast<double>(r.prompt), output += static_cast<double>(r.output);
    ServingRequest mean;
    mean.prompt = static_cast<std::uint64_t>(std::max(1.0, std::round(prompt / sample.size())));
    mean.output = static_cast<std::uint64_t>(std::max(1.0, std::round(output / sample.size())));
    const RequestTimes r = serve({mean}).requests.at(0);
    out.unloaded_ttft_s = r.first_token_s, out.unloaded_e2el_s = r.finish_s;
    out.unloaded_tpot_s =
        mean.output > 1 ? (r.finish_s - r.first_token_s) / static_cast<double>(mean.output - 1) : 0;
  }
  auto ms = [](double s) { return fixed_text(s * 1e3, 3) + " ms"; };
  if (o.slo_ttft > 0 && o.slo_ttft < out.unloaded_ttft_s)
    throw InputError("--slo-ttft " + ms(o.slo_ttft) + " is below the unloaded TTFT of " +
                     ms(out.unloaded_ttft_s) + " (the trace's mean request alone): no rate can meet it");
  if (o.slo_tpot > 0 && o.slo_tpot < out.unloaded_tpot_s)
    throw InputError("--slo-tpot " + ms(o.slo_tpot) + " is below the unloaded TPOT of " +
                     ms(out.unloaded_tpot_s) + " (the trace's mean request alone): no rate can meet it");

  const std::uint64_t window = o.window > 0 ? o.window : kDefaultWindow;
  out.saturated_rate = saturated_rate(shape, serve, 4 * window);
  auto trial = [&](double rate) {
    const CapacityTrial t = capacity_trial(shape, serve, o, rate, out.unloaded_e2el_s, out.saturated_rate);
    out.curve.push_back(t);
    if (on_trial) on_trial(t);
    return t.meets;
  };
  // Bracket: a meeting rate `lo` and a failing one `hi`.
  double lo = 0, hi = 0;
  double rate =
      std::isfinite(out.saturated_rate) ? out.saturated_rate : 1 / std::max(out.unloaded_ttft_s, 1e-9);
  // Up by doubling, but from the saturated throughput only by the precision: above it the queue grows.
  auto up = [&](double r) { return r >= out.saturated_rate ? r * (1 + o.precision) : r * 2; };
  if (trial(rate)) {
    for (lo = rate; trial(up(lo)); lo = up(lo))
      if (lo > 1e9) throw InputError("the capacity search passed 1e9 requests/s: is any step priced?");
    hi = up(lo);
  } else {
    // Down to a thousandth of the saturated throughput, or to the rate whose trial would span 5e5 s (half
    // the longest simulated time): a deployment that misses the SLOs there misses them at any rate.
    auto too_slow = [&](double r) {
      const TrialSize size = trial_size(o, r, out.unloaded_e2el_s);
      return (std::isfinite(out.saturated_rate) && r < out.saturated_rate / 1000) ||
             static_cast<double>(2 * size.warm + size.window) / r > kMaxTime / 2;
    };
    for (hi = rate; too_slow(hi / 2) || !trial(hi / 2); hi /= 2)
      if (too_slow(hi / 2)) {
        const CapacityTrial& t = out.curve.back();
        throw InputError("no rate meets the SLOs: at " + shortest_number(t.rate) + " requests/s " +
                         fixed_text(std::min(t.attainment, 1.0) * 100, 1) +
                         " % of requests are within both (fails: " + t.fails + "; attainment asked " +
                         fixed_text(o.attainment * 100, 1) + " %)");
      }
    lo = hi / 2;
  }
  while (hi / lo - 1 > o.precision) {
    const double mid = std::sqrt(lo * hi);
    (trial(mid) ? lo : hi) = mid;
  }
  std::sort(out.curve.begin(), out.curve.end(),
            [](const CapacityTrial& a, const CapacityTrial& b) { return a.rate < b.rate; });
  out.rate = lo, out.failing_rate = hi;
  for (const CapacityTrial& t : out.curve)
    if (t.rate == hi) out.binding = t.fails;
  const CapacityTrial& c = out.at_capacity();
  const double z = 1.96 * c.margin_error;
  out.rate_low = std::min(lo, crossing(out.curve, lo, z, false));
  out.rate_high = std::max(hi, crossing(out.curve, lo, -z, true));
  return out;
}

}  // namespace ultrasim
