// The step-time predictor of request arrivals (`serve --rate/--requests` without --exact-steps): an MoE
// segment is priced from two numbers, its busiest chip's tokens m and the stage's total T, by bilinear
// interpolation between points simulated at the counts of a ladder around them (1, 2, 3, 4, 6, 8, 12, 16,
// ...: steps of 4/3 and 3/2), so that an iteration of any request mix costs a few table look-ups once the
// points it needs are simulated. Each point is simulated once per process and, with a cache directory,
// once across processes (the planner's deployments of one fabric and model): a file per point named by a
// hash of everything its simulation depends on, holding that description and the point's numbers (doubles
// written to round-trip, so a point read is the point simulated, bit for bit).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "workloads/serving/segment_time.hpp"

namespace ultrasim {

class StepTimePredictor {
 public:
  // The point (stage, m, T): T tokens on the stage packed at m per chip (clamped to m <= T <= m x chips).
  using Simulate = std::function<SegmentTime(int stage, std::uint64_t m, std::uint64_t T)>;
  // A point as the numbers a cache file holds, and back (encode_segment, decode_segment).
  using Encode = std::function<std::vector<double>(const SegmentTime&)>;
  using Decode = std::function<SegmentTime(const std::vector<double>&)>;

  // `stage_chips`: the chips of a stage (T's upper clamp is m x stage_chips). `cache_dir` "" shares no
  // points; `description` is what the points depend on besides (stage, m, T) (the fabric, the model, the
  // routing, the chip profile, ...): two runs whose descriptions differ never share a point.
  StepTimePredictor(int stage_chips, Simulate simulate, Encode encode, Decode decode,
                    std::string cache_dir = "", std::string description = "");

  // An MoE segment of stage `stage` with `chip_tokens` tokens on each chip: bilinear in (m, T) between the
  // four ladder points around them; the bounds and the engine are the nearest point's.
  SegmentTime price(int stage, const std::vector<std::uint64_t>& chip_tokens);
  // Points simulated (or read from the cache) so far.
  std::size_t points() const { return points_.size(); }

  // The ladder: the count after n (1 -> 2 -> 3 -> 4 -> 6 -> 8 -> 12 -> ...), and the two ladder counts
  // around n ({n, n} when n is on it).
  static std::uint64_t ladder_next(std::uint64_t n);
  static std::pair<std::uint64_t, std::uint64_t> bracket(std::uint64_t n);
  // The cache's key of a point ("" without a cache directory) and its file.
  std::string cache_key(int stage, std::uint64_t m, std::uint64_t T) const;
  std::string cache_path(const std::string& key) const;

 private:
  SegmentTime point(int stage, std::uint64_t m, std::uint64_t T);
  std::optional<SegmentTime> read_cache(const std::string& key) const;
  void write_cache(const std::string& key, const SegmentTime& t) const;

  int stage_chips_;
  Simulate simulate_;
  Encode encode_;
  Decode decode_;
  std::string cache_dir_, description_;
  std::map<std::tuple<int, std::uint64_t, std::uint64_t>, SegmentTime> points_;
};

}  // namespace ultrasim
