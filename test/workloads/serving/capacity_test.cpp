// The capacity search on deployments whose service a closed form knows: one request at a time at a
// constant service time is M/D/1, whose waiting-time distribution (Erlang's formula) gives the rate at
// which a share q of requests waits at most w; a deployment with no SLOs to break is found at its saturated
// throughput; and the capacity does not move with the window measured.
#include <catch2/catch.hpp>

#include <cmath>

#include "topology/base/errors.hpp"
#include "workloads/serving/capacity.hpp"

using namespace ultrasim;

namespace {

constexpr double kService = 1.0;  // seconds: every request one prefill iteration of this

// P(W <= x) of M/D/1 at rate `lambda`, service S (Erlang 1909; Crommelin 1932):
// (1 - rho) sum_{k=0}^{floor(x/S)} (lambda (k S - x))^k / k! exp(-lambda (k S - x)).
double md1_wait_cdf(double lambda, double x, double S = kService) {
  const double rho = lambda * S;
  double sum = 0, factorial = 1;
  for (int k = 0; k <= static_cast<int>(std::floor(x / S)); ++k) {
    if (k > 0) factorial *= k;
    const double a = lambda * (k * S - x);
    sum += std::pow(a, k) / factorial * std::exp(-a);
  }
  return (1 - rho) * sum;
}

// The rate at which P(W <= w) = q (P falls as the rate rises).
double md1_capacity(double w, double q) {
  double lo = 1e-6, hi = 1 / kService - 1e-9;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (md1_wait_cdf(mid, w) >= q ? lo : hi) = mid;
  }
  return lo;
}

// Static batches of one on a pool whose every iteration costs kService: M/D/1.
ServingSchedule one_at_a_time(const std::vector<ServingRequest>& requests) {
  std::vector<ServingPool> pools(1);
  pools[0].kv_blocks = 1000;
  pools[0].step = [](const std::vector<StepItem>&) { return kService; };
  SchedulerOptions o;
  o.max_batch = 1;
  return schedule_static(requests, pools, o);
}

TraceShape one_token_requests() {
  RequestGenerator g;
  g.input_len = 16, g.output_len = 1, g.seed = 11;
  return generated_shape(g);
}

}  // namespace

TEST_CASE("Erlang's M/D/1 waiting-time distribution is what the formula is") {
  // Its checks: P(W = 0) = 1 - rho; the mean from the distribution, rho S / (2 (1 - rho)) (P-K).
  const double lambda = 0.6;
  CHECK(md1_wait_cdf(lambda, 0) == Approx(1 - lambda).epsilon(1e-12));
  double mean = 0;
  const double dx = 1e-3;
  for (double x = 0; x < 20; x += dx) mean += (1 - md1_wait_cdf(lambda, x + dx / 2)) * dx;
  CHECK(mean == Approx(lambda / (2 * (1 - lambda))).epsilon(1e-3));
}

TEST_CASE("the capacity of one request at a time is the M/D/1 rate at which q wait at most w") {
  // TTFT = wait + S; the SLO S + w at attainment q. Two (w, q): the search finds the closed form's rate
  // within 3 %.
  for (const auto& [w, q] : std::vector<std::pair<double, double>>{{2.0, 0.9}, {0.5, 0.5}}) {
    CapacityOptions o;
    o.slo_ttft = kService + w, o.attainment = q, o.window = 40000;
    const CapacityResult r = find_capacity(one_token_requests(), one_at_a_time, o);
    const double expected = md1_capacity(w, q);
    INFO("w " << w << " s, q " << q << ": found " << r.rate << " req/s, M/D/1 " << expected);
    CHECK(r.rate == Approx(expected).epsilon(0.03));
    CHECK(r.failing_rate / r.rate - 1 <= o.precision);
    CHECK(r.binding == "ttft");
    CHECK(r.unloaded_ttft_s == Approx(kService).epsilon(1e-12));
    CHECK(r.rate_low <= r.rate);
    CHECK(r.rate_high >= r.failing_rate);
  }
}

TEST_CASE("with no SLO to break the capacity is the service rate, where the queue starts to grow") {
  // M/D/1 sustains any rate below 1 / S: the search stops at the queue, within 3 %.
  CapacityOptions o;
  o.window = 20000;
  const CapacityResult r = find_capacity(one_token_requests(), one_at_a_time, o);
  INFO("found " << r.rate << " req/s");
  CHECK(r.rate == Approx(1 / kService).epsilon(0.03));
  CHECK(r.binding == "queue");
}

TEST_CASE("the capacity does not move with the window measured") {
  CapacityOptions o;
  o.slo_ttft = kService + 2.0, o.attainment = 0.9;
  const CapacityResult once = find_capacity(one_token_requests(), one_at_a_time, o);
  o.window = 2 * kDefaultWindow;
  const CapacityResult twice = find_capacity(one_token_requests(), one_at_a_time, o);
  INFO(once.rate << " and " << twice.rate << " req/s");
  CHECK(twice.rate == Approx(once.rate).epsilon(0.03));
}

TEST_CASE("a trial measures the window's requests and the queue's trend") {
  CapacityOptions o;
  o.slo_ttft = kService + 2.0, o.window = 1000;
  const CapacityTrial calm = capacity_trial(one_token_requests(), one_at_a_time, o, 0.5, kService);
  CHECK(calm.measured == 1000);
  CHECK(calm.requests == 1000 + 2 * 250);  // warm-up: a quarter of the window before it and after it
  CHECK(calm.sustained);
  CHECK(std::abs(calm.queue_growth) < 20);
  // 1.5 requests per service time: the queue grows by what arrives less what is served over the window.
  const CapacityTrial flooded = capacity_trial(one_token_requests(), one_at_a_time, o, 1.5, kService);
  const double served = (flooded.window_end_s - flooded.window_start_s) / kService;
  CHECK(flooded.queue_growth == Approx(1000 - served).epsilon(0.05));  // a fit, not a difference of ends
  CHECK_FALSE(flooded.sustained);
  CHECK(flooded.fails == "ttft+queue");
}

TEST_CASE("a trace's arrivals are rescaled to the rate and repeated past its end") {
  std::vector<ServingRequest> trace(3);
  trace[0] = {10, 5, 7}, trace[1] = {12, 6, 8}, trace[2] = {16, 9, 3};  // a mean gap of 3 s
  const auto shape = trace_shape(trace);
  const auto r = shape(1.0, 5);  // at 1 request/s: a mean gap of 1 s
  REQUIRE(r.size() == 5);
  CHECK(r[0].arrival_s == Approx(0));
  CHECK(r[1].arrival_s == Approx(2.0 / 3));
  CHECK(r[2].arrival_s == Approx(2.0));
  CHECK(r[3].arrival_s == Approx(3.0));  // the copy starts a mean gap after the last
  CHECK(r[4].arrival_s == Approx(3.0 + 2.0 / 3));
  CHECK(r[4].prompt == 6);
  CHECK_THROWS_AS(trace_shape({trace[0]}), InputError);
}

TEST_CASE("bad capacity options are refused") {
  CapacityOptions o;
  o.attainment = 0;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("--attainment must be a share of requests in (0, 1]"));
  o = CapacityOptions{};
  o.precision = 0;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("--capacity-precision"));
  o = CapacityOptions{};
  o.attainment_of = "all";
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("--attainment-of must be both"));
  // An SLO below what one request alone takes: refused with that figure.
  o = CapacityOptions{};
  o.slo_ttft = 0.5;
  CHECK_THROWS_WITH(find_capacity(one_token_requests(), one_at_a_time, o),
                    "--slo-ttft 500.000 ms is below the unloaded TTFT of 1000.000 ms (the trace's mean "
                    "request alone): no rate can meet it");
}

TEST_CASE("a deployment that holds every request at once is searched up from one request's TTFT") {
  // No queue: a request's TTFT is 1 s plus 10 ms per request that arrived between 1 s and 1 ms before it,
  // so TTFT <= 2 s exactly when at most 100 did. Under Poisson arrivals at rate r that count is
  // Poisson(0.999 r): the capacity at q = 0.9 is the r with P(N <= 100) = 0.9. Requests arriving at once
  // all have the same TTFT: there is no saturated throughput to start from.
  const Deployment crowd = [](const std::vector<ServingRequest>& requests) {
    ServingSchedule s;
    std::size_t first = 0, last = 0;  // the requests in (t - 1, t - 0.001]
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const double t = requests[i].arrival_s;
      while (requests[first].arrival_s <= t - 1) ++first;
      while (last < i && requests[last].arrival_s <= t - 0.001) ++last;
      RequestTimes times;
      times.arrival_s = t;
      times.first_token_s = times.finish_s = times.last_token_s =
          t + 1 + 0.01 * static_cast<double>(last - std::min(first, last));
      s.requests.push_back(times);
    }
    return s;
  };
  auto poisson_cdf = [](double mean, int k) {
    double term = std::exp(-mean), sum = term;
    for (int n = 1; n <= k; ++n) term *= mean / n, sum += term;
    return sum;
  };
  double lo = 1, hi = 200;
  for (int i = 0; i < 100; ++i) (poisson_cdf(0.999 * (lo + hi) / 2, 100) >= 0.9 ? lo : hi) = (lo + hi) / 2;
  CapacityOptions o;
  o.slo_ttft = 2, o.attainment = 0.9, o.window = 20000;
  const CapacityResult r = find_capacity(one_token_requests(), crowd, o);
  INFO("found " << r.rate << ", Poisson " << lo);
  CHECK(std::isinf(r.saturated_rate));
  CHECK(r.rate == Approx(lo).epsilon(0.03));
  CHECK(r.binding == "ttft");
}
