// The step-time predictor (workloads/serving/step_predictor.hpp) as a unit: its ladder, its bilinear
// interpolation (exact on a bilinear function), its points simulated once, and its cache shared between
// processes (a point read back is the point simulated, bit for bit; any difference in what a point depends
// on makes another key).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "workloads/serving/step_predictor.hpp"

using namespace ultrasim;

namespace {

const std::vector<std::string> kTiers{"server", "rack"};

// A point whose every interpolated field is bilinear in (m, T): a + b m + c T + d m T.
SegmentTime bilinear(std::uint64_t m, std::uint64_t T) {
  const double x = static_cast<double>(m), y = static_cast<double>(T);
  SegmentTime t;
  t.seconds = 1e-5 + 3e-7 * x + 2e-8 * y + 5e-10 * x * y;
  t.compute_s = 2e-6 + 1e-7 * x + 4e-9 * x * y;
  t.fixed_s = 1e-6;
  t.comm_s = t.seconds - t.compute_s;
  t.flops = 1e9 * x + 3e8 * y;
  t.bytes = 7e6 + 2e5 * x * y;
  t.link_bytes = 1e4 * y;
  t.comm_bound = "link:rack";
  return t;
}

struct Counting {
  int calls = 0;
  StepTimePredictor make(int chips, const std::string& dir = "", const std::string& description = "d") {
    return StepTimePredictor(
        chips,
        [this](int, std::uint64_t m, std::uint64_t T) {
          ++calls;
          return bilinear(m, T);
        },
        [](const SegmentTime& t) { return encode_segment(t, kTiers); },
        [](const std::vector<double>& v) { return decode_segment(v, kTiers); }, dir, description);
  }
};

std::vector<std::uint64_t> tokens(std::uint64_t busiest, std::uint64_t total, int chips) {
  std::vector<std::uint64_t> out(static_cast<std::size_t>(chips), 0);
  out[0] = busiest;
  std::uint64_t left = total - busiest;
  for (std::size_t c = 1; c < out.size() && left > 0; ++c) {
    out[c] = std::min(left, busiest);
    left -= out[c];
  }
  return out;
}

std::string temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("ultrasim_predictor_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace

TEST_CASE("step predictor: the ladder steps by 4/3 and 3/2 and brackets every count") {
  std::vector<std::uint64_t> ladder{1};
  while (ladder.size() < 12) ladder.push_back(StepTimePredictor::ladder_next(ladder.back()));
  CHECK(ladder == std::vector<std::uint64_t>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64});
  CHECK(StepTimePredictor::bracket(1) == std::pair<std::uint64_t, std::uint64_t>{1, 1});
  CHECK(StepTimePredictor::bracket(5) == std::pair<std::uint64_t, std::uint64_t>{4, 6});
  CHECK(StepTimePredictor::bracket(6) == std::pair<std::uint64_t, std::uint64_t>{6, 6});
  CHECK(StepTimePredictor::bracket(100) == std::pair<std::uint64_t, std::uint64_t>{96, 128});
  for (std::uint64_t n = 1; n < 5000; n += 7) {
    const auto [lo, hi] = StepTimePredictor::bracket(n);
    CHECK(lo <= n);
    CHECK(n <= hi);
    CHECK((lo == hi || StepTimePredictor::ladder_next(lo) == hi));
  }
}

TEST_CASE("step predictor: bilinear interpolation is exact on a bilinear function") {
  Counting sim;
  StepTimePredictor predictor = sim.make(64);
  // (busiest m, total T) pairs whose four corners lie inside the clamp m <= T <= 64 m.
  for (const auto& [m, T] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {5, 100}, {7, 50}, {13, 200}, {20, 333}, {6, 96}, {40, 1000}, {3, 47}}) {
    const SegmentTime want = bilinear(m, T);
    const SegmentTime got = predictor.price(0, tokens(m, T, 64));
    INFO("m " << m << ", T " << T);
    for (double SegmentTime::*f :
         {&SegmentTime::seconds, &SegmentTime::compute_s, &SegmentTime::fixed_s, &SegmentTime::comm_s,
          &SegmentTime::flops, &SegmentTime::bytes, &SegmentTime::link_bytes})
      CHECK(got.*f == Approx(want.*f).epsilon(1e-12));
    CHECK(got.comm_bound == "link:rack");  // the nearest corner's
  }
}

TEST_CASE("step predictor: each point is simulated once, and a count on the ladder needs no neighbour") {
  Counting sim;
  StepTimePredictor predictor = sim.make(8);
  predictor.price(0, tokens(4, 16, 8));  // both on the ladder: one point
  CHECK(sim.calls == 1);
  CHECK(predictor.points() == 1);
  predictor.price(0, tokens(5, 16, 8));  // m between 4 and 6: two points, (4, 16) already there
  CHECK(sim.calls == 2);
  predictor.price(0, tokens(5, 16, 8));
  CHECK(sim.calls == 2);
  predictor.price(1, tokens(4, 16, 8));  // another stage is another point
  CHECK(sim.calls == 3);
  CHECK(predictor.points() == 3);
}

TEST_CASE("step predictor: a point read from the cache is the point simulated, bit for bit") {
  const std::string dir = temp_dir("bits");
  Counting first, second;
  StepTimePredictor a = first.make(16, dir), b = second.make(16, dir);
  const std::vector<std::uint64_t> load = tokens(7, 45, 16);
  const SegmentTime simulated = a.price(0, load);
  CHECK(first.calls == 4);
  const SegmentTime read = b.price(0, load);
  CHECK(second.calls == 0);  // every corner from the files `a` wrote
  CHECK(b.points() == 4);
  for (double SegmentTime::*f : {&SegmentTime::seconds, &SegmentTime::compute_s, &SegmentTime::comm_s,
                                 &SegmentTime::flops, &SegmentTime::bytes, &SegmentTime::link_bytes})
    CHECK(std::memcmp(&(simulated.*f), &(read.*f), sizeof(double)) == 0);
  CHECK(read.comm_bound == simulated.comm_bound);
  // Without a directory nothing is shared.
  Counting third;
  StepTimePredictor c = third.make(16);
  c.price(0, load);
  CHECK(third.calls == 4);
  CHECK(c.cache_key(0, 4, 16).empty());
}

TEST_CASE("step predictor: keys differ when anything a point depends on differs") {
  const std::string dir = temp_dir("keys");
  Counting sim;
  const StepTimePredictor p = sim.make(16, dir, "trn3|deepseek-v3|random");
  std::set<std::string> keys{p.cache_key(0, 4, 16),
                             p.cache_key(1, 4, 16),
                             p.cache_key(0, 6, 16),
                             p.cache_key(0, 4, 24),
                             sim.make(16, dir, "trn3|deepseek-v3|uniform").cache_key(0, 4, 16),
                             sim.make(16, dir, "nvl72|deepseek-v3|random").cache_key(0, 4, 16)};
  CHECK(keys.size() == 6);
  std::set<std::string> paths;
  for (const auto& key : keys) paths.insert(p.cache_path(key));
  CHECK(paths.size() == 6);
  // A run with another description does not read the first one's points; a torn file is simulated again.
  Counting one, other;
  StepTimePredictor x = one.make(16, dir, "a"), y = other.make(16, dir, "b");
  x.price(0, tokens(4, 16, 16));
  y.price(0, tokens(4, 16, 16));
  CHECK(other.calls == 1);
  { std::ofstream(x.cache_path(x.cache_key(0, 4, 16))) << "{\"key\": "; }
  Counting again;
  StepTimePredictor z = again.make(16, dir, "a");
  z.price(0, tokens(4, 16, 16));
  CHECK(again.calls == 1);
}
