// The capacity of a serving deployment (`ultrasim serve --capacity`): the highest request rate it
// sustains, in steady state, while a share of the requests meets the TTFT and TPOT SLOs (DistServe's
// goodput; vLLM's and SGLang's benchmark practice). Free of SimGrid and of the fabric: a deployment is a
// function that schedules a list of requests from idle (capacity_run.cpp gives the fabric's; the tests
// give closed forms).
//
// One trial at rate r: `warm + window + warm` requests of the trace's shape at r (the same seed at every
// rate, so trials differ only in their pace). Measured: the `window` requests in the middle, by arrival;
// the warm-up before them fills the deployment, the requests after them keep it loaded until they are
// served. With E0 the unloaded end-to-end latency of the trace's mean request and L = r E0 the requests
// arriving in one such lifetime: window = max(--window-requests, 10 L) (long enough in time for a queue
// that grows by whole batches to show it), warm = clamp(3 L, window / 4, 2 window). A trial *meets* the
// SLOs when
//   - the queue does not grow across the window: the number of requests in the system (arrived, not
//     finished), fitted by least squares against time over the window's arrivals, rises by at most
//     kQueueGrowth of the window's requests (a rate 2 % over the service rate fails it);
//   - attainment "both": at least `attainment` of the measured requests are within both SLOs; "each": at
//     least `attainment` within the TTFT SLO and at least `attainment` within the TPOT SLO (the
//     percentile form: p99 TTFT and p99 TPOT within their SLOs at 0.99). A request of one output token
//     has no TPOT and is within it.
// The search: from the saturated throughput (or 1 / TTFT(unloaded) when it was not measured), doubled or
// halved until one rate meets and another does not, then
// bisected on a log scale until the highest meeting rate and the lowest failing one are within
// `precision` of each other. The capacity is that highest meeting rate.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "workloads/serving/requests.hpp"
#include "workloads/serving/schedulers/scheduler.hpp"

namespace ultrasim {

struct CapacityOptions {
  double slo_ttft = 0, slo_tpot = 0;   // seconds; 0: none
  double attainment = 0.9;             // share of requests, in (0, 1]
  std::string attainment_of = "both";  // both | each
  double precision = 0.02;             // relative gap between the highest meeting and lowest failing rate
  std::uint64_t window = 0;            // measured requests per trial, at least; 0: 2,000
  // InputError naming the option.
  void validate() const;
};

inline constexpr double kQueueGrowth = 0.02, kQueueNoise = 3;
inline constexpr std::uint64_t kDefaultWindow = 2000;
inline constexpr double kWindowLifetimes = 10;
inline constexpr double kWarmLifetimes = 3;
inline constexpr std::uint64_t kMaxWindow = 1u << 22;

struct CapacityTrial {
  double rate = 0;                                  // requests/s
  std::uint64_t requests = 0, measured = 0;         // simulated, in the window
  double window_start_s = 0, window_end_s = 0;      // the first and last measured arrival
  double attainment = 0;                            // within both SLOs
  double ttft_attainment = 0, tpot_attainment = 0;  // within each
  double margin = 0;         // the binding share less the attainment asked (>= 0: the SLOs are met)
  double margin_error = 0;   // its standard error, from 20 batch means over the window
  double queue_growth = 0;   // requests, over the window (fitted)
  double output_tokens = 0;  // of the measured requests
  double p50_ttft_s = 0, p90_ttft_s = 0, p99_ttft_s = 0, p50_tpot_s = 0, p90_tpot_s = 0, p99_tpot_s = 0;
  bool sustained = false, meets = false;
  std::string fails;  // what it failed: "ttft", "tpot", "ttft+tpot", "queue", joined by "+"; "" if none
};

struct CapacityResult {
  double rate = 0;                     // the capacity, requests/s
  double rate_low = 0, rate_high = 0;  // its 95 % interval: the bracket, widened by the margin's error
  double failing_rate = 0;             // the lowest rate that failed
  std::string binding;                 // what failed there
  double unloaded_ttft_s = 0, unloaded_tpot_s = 0, unloaded_e2el_s = 0;
  double saturated_rate = 0;  // requests/s with every request arriving at once (infinity: not measured)
  std::vector<CapacityTrial> curve;  // every trial, by rate
  const CapacityTrial& at_capacity() const;
};

// Requests of the trace's shape: `count` of them at `rate` requests/s, the same ones (but for their
// pace) at every rate.
using TraceShape = std::function<std::vector<ServingRequest>(double rate, std::uint64_t count)>;
// A deployment: the schedule of `requests` from idle.
using Deployment = std::function<ServingSchedule(const std::vector<ServingRequest>& requests)>;

// The shape of generated requests, or of a trace (its arrivals rescaled to the rate, the trace repeated
// after itself, one mean gap later, when more requests are asked than it holds).
TraceShape generated_shape(RequestGenerator generator);
TraceShape trace_shape(std::vector<ServingRequest> trace);

// A trial's requests: `warm` before the window and as many after it, `window` measured.
struct TrialSize {
  std::uint64_t warm = 0, window = 0;
};
TrialSize trial_size(const CapacityOptions& o, double rate, double e0);

// The saturated throughput (vLLM's benchmark at --request-rate inf): `count` requests arriving at once,
// requests/s completed between the count/4-th completion and the 3 count/4-th, or the last before the
// queue emptied; with fewer than count/8 of them, again with twice the requests (twice more), then
// infinity (a deployment that holds them all at once); infinity too when they complete as fast as they
// arrived (over 1e8/s).
double saturated_rate(const TraceShape& shape, const Deployment& serve, std::uint64_t count);

// The trial at `rate`, measured as above (e0: the unloaded end-to-end latency that sizes the warm-up;
// above `saturated` requests/s the queue grows whatever the window shows).
CapacityTrial capacity_trial(const TraceShape& shape, const Deployment& serve, const CapacityOptions& o,
                             double rate, double e0,
                             double saturated = std::numeric_limits<double>::infinity());

// InputError when an SLO is below the deployment's unloaded latency (one mean request alone: the figure
// named) or when no rate meets the SLOs down to a thousandth of the saturated throughput (or to one whose
// trial would span 5e5 s); `on_trial` hears each
// trial.
CapacityResult find_capacity(const TraceShape& shape, const Deployment& serve, const CapacityOptions& o,
                             const std::function<void(const CapacityTrial&)>& on_trial = {});

}  // namespace ultrasim
