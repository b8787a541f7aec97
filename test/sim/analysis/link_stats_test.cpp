// Link statistics from a run's records: bytes per direction, max-min rates over time, utilisation
// series whose integrals give back the bytes, and the direction that bounded each flow. Hand-made
// records on switch:4 (100 GB/s per direction, chip - switch0 - chip); SimGrid-free.
#include <catch2/catch.hpp>

#include "sim/analysis/link_stats.hpp"
#include "topology/registry.hpp"

using namespace ultrasim;

namespace {

constexpr double B = 100e9;  // link bandwidth, B/s
constexpr double n = 1e6;    // bytes of each flow
constexpr double t = n / B;  // one flow alone on its path

TransferRecord flow(int src, int dst, double start, double wire_end, std::uint64_t bytes = 1000000) {
  TransferRecord r;
  r.src = src, r.dst = dst, r.bytes = bytes, r.start = start, r.wire_end = wire_end, r.end = wire_end + 1e-6;
  return r;
}

int direction(const Topology& topology, const std::string& name) {
  for (int d = 0; d < 2 * static_cast<int>(topology.links().size()); ++d)
    if (LinkStats::direction_name(topology, d) == name) return d;
  FAIL("no direction " << name);
  return -1;
}

// The integral over [0, end] of a piecewise-constant series.
double integral(const StepSeries& s, double end) {
  double sum = 0;
  for (std::size_t i = 0; i < s.t.size(); ++i)
    sum += s.value[i] * ((i + 1 < s.t.size() ? s.t[i + 1] : end) - s.t[i]);
  return sum;
}

}  // namespace

TEST_CASE("two flows into one chip share its link at B/2, a third alone runs at B") {
  const Topology topology = make_topology("switch:4", {}, {});
  const Routes routes(topology);
  const FaultPlan faults = plan_faults({}, topology);
  // 0->1 and 2->1 share switch0->chip1 on [0, 2t]; 0->3 follows alone on [2t, 3t].
  const std::vector<TransferRecord> records{flow(0, 1, 0, 2 * t), flow(2, 1, 0, 2 * t),
                                            flow(0, 3, 2 * t, 3 * t)};
  const double time = 3 * t + 1e-6;
  LinkStats s = compute_link_stats(topology, RecordPaths(routes, faults), faults, records, time, {.hot = 8});

  SECTION("bytes per direction: every flow's bytes on each link it crosses") {
    CHECK(s.directions[direction(topology, "chip0->switch0")].bytes == 2 * n);
    CHECK(s.directions[direction(topology, "switch0->chip1")].bytes == 2 * n);
    CHECK(s.directions[direction(topology, "chip2->switch0")].bytes == n);
    CHECK(s.directions[direction(topology, "switch0->chip3")].bytes == n);
    std::uint64_t total = 0;
    for (const auto& d : s.directions) total += d.bytes;
    CHECK(total == 3 * 2 * n);  // bytes x hops
    CHECK(s.directions[direction(topology, "switch0->chip1")].flows == 2);
  }
  SECTION("max-min rates: the shared link's flows at B/2, the lone one at B; each integrates to its bytes") {
    const auto& into1 = s.directions[direction(topology, "switch0->chip1")];
    CHECK(into1.peak_util == Approx(1.0).epsilon(1e-15));
    CHECK(into1.busy_s == Approx(2 * t).epsilon(1e-15));
    const auto& from0 = s.directions[direction(topology, "chip0->switch0")];
    CHECK(from0.rate.t == std::vector<double>{0, 2 * t, 3 * t});
    CHECK(from0.rate.value == std::vector<double>{B / 2, B, 0});
    CHECK(from0.peak_util == 1.0);
    CHECK(from0.busy_s == Approx(3 * t).epsilon(1e-15));
    CHECK(from0.mean_util == Approx(2 * n / (B * time)).epsilon(1e-15));
    CHECK(s.max_flow_error < 1e-15);
  }
  SECTION("the utilisation integral equals the bytes carried, on every direction and every tier") {
    for (int d : s.hot)
      CHECK(integral(s.directions[d].rate, time) ==
            Approx(static_cast<double>(s.directions[d].bytes)).epsilon(1e-14));
    REQUIRE(s.tiers.size() == 1);
    CHECK(s.tiers[0].tier == "link");
    CHECK(s.tiers[0].bytes == 6 * n);
    CHECK(integral(s.tiers[0].util, time) * s.tiers[0].capacity == Approx(6 * n).epsilon(1e-14));
    // Peak of the tier: on [0, 2t] four directions busy at B/2, B/2, B, B... of 8 directions of B.
    CHECK(s.tiers[0].peak_util == Approx((B / 2 + B / 2 + B) / (8 * B)).epsilon(1e-15));
    CHECK(s.tiers[0].busiest_peak_util == 1.0);
  }
  SECTION("bottlenecks: the shared link bounds the first two flows; the lone flow its first hop") {
    CHECK(s.flows[0].direction == direction(topology, "switch0->chip1"));
    CHECK(s.flows[0].bound_s == Approx(2 * t).epsilon(1e-15));
    CHECK(s.flows[1].direction == direction(topology, "switch0->chip1"));
    CHECK(s.flows[2].direction == direction(topology, "chip0->switch0"));
    CHECK(s.directions[direction(topology, "switch0->chip1")].bottleneck_s == Approx(2 * t).epsilon(1e-15));
    CHECK(s.directions[direction(topology, "chip2->switch0")].bottleneck_s == 0);
  }
  SECTION("binned, a series keeps its integral: each bin holds its mean") {
    const auto& from0 = s.directions[direction(topology, "chip0->switch0")].rate;
    // Over [0, 3t + 1 us] in 4 bins: B/2 until 2t, B until 3t, then 0.
    const std::vector<double> bins = bin_averages(from0, time, 4);
    const double w = time / 4;
    REQUIRE(bins.size() == 4);
    CHECK(bins[0] == Approx(B / 2).epsilon(1e-14));  // [0, w): w < 2t
    double sum = 0;
    for (double v : bins) sum += v * w;
    CHECK(sum == Approx(2 * n).epsilon(1e-14));
    CHECK(bins[3] == Approx((std::max(0.0, 3 * t - 3 * w) * B) / w).epsilon(1e-12));
  }
  SECTION("the hottest directions come first, by mean utilisation") {
    REQUIRE(s.hot.size() == 4);  // only used directions
    CHECK(s.directions[s.hot[0]].bytes == 2 * n);
    CHECK(s.directions[s.hot[3]].bytes == n);
  }
}

TEST_CASE(
    "a degraded link lowers the rates from the fault's time, and utilisation stays against nominal "
    "capacity") {
  const Topology topology = make_topology("switch:4", {}, {});
  const Routes routes(topology);
  // chip1's link at half its bandwidth from t on: a flow 0->1 of 1.5 n bytes carries n by t at B, the
  // rest at B/2 by 2t.
  const FaultPlan faults =
      plan_faults({"degrade:chip1-switch0=0.5@" + std::to_string(t * 1e6) + "us"}, topology);
  const std::vector<TransferRecord> records{flow(0, 1, 0, 2 * t, 1500000)};
  LinkStats s = compute_link_stats(topology, RecordPaths(routes, faults), faults, records, 2 * t, {.hot = 8});
  const auto& into1 = s.directions[direction(topology, "switch0->chip1")];
  CHECK(into1.rate.value == std::vector<double>{B, B / 2, 0});
  CHECK(into1.peak_util == 1.0);
  CHECK(integral(into1.rate, 2 * t) == Approx(1.5 * n).epsilon(1e-12));
  CHECK(s.max_flow_error < 1e-12);
  // chip0's link was not degraded: the flow, bounded by chip1's, uses half of it after t.
  CHECK(s.directions[direction(topology, "chip0->switch0")].rate.value == std::vector<double>{B, B / 2, 0});
}
