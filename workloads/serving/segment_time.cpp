#include "workloads/serving/segment_time.hpp"

#include <cmath>

#include "topology/base/errors.hpp"

namespace ultrasim {

std::vector<double> encode_segment(const SegmentTime& t, const std::vector<std::string>& tiers) {
  double tier = -1;
  for (std::size_t i = 0; i < tiers.size(); ++i)
    if (t.comm_bound == "link:" + tiers[i]) tier = static_cast<double>(i);
  return {t.seconds,
          t.compute_s,
          t.comm_s,
          t.flops,
          t.bytes,
          t.link_bytes,
          static_cast<double>(t.transfers),
          static_cast<double>(t.wrong),
          t.bound == "hbm" ? 1.0 : 0.0,
          tier,
          static_cast<double>(t.engine),
          static_cast<double>(t.tabled),
          static_cast<double>(t.fell_back)};
}

std::string segment_values_problem(const std::vector<double>& v, const std::vector<std::string>& tiers) {
  if (v.size() != 13) return std::to_string(v.size()) + " numbers, not 13";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) return "number " + std::to_string(i + 1) + " is not finite";
    if (i != 9 && v[i] < 0) return "number " + std::to_string(i + 1) + " is negative";
  }
  for (std::size_t i : {6, 7, 8, 9, 10, 11, 12})
    if (v[i] != std::floor(v[i])) return "number " + std::to_string(i + 1) + " is not a whole number";
  if (v[8] > 1 || v[9] < -1 || v[9] >= static_cast<double>(tiers.size()))
    return "its bound or its link tier is out of range";
  if (v[10] < static_cast<double>(Engine::kSimGrid) || v[10] > static_cast<double>(Engine::kMatrix))
    return "its engine is out of range";
  return {};
}

SegmentTime decode_segment(const std::vector<double>& v, const std::vector<std::string>& tiers) {
  if (const std::string problem = segment_values_problem(v, tiers); !problem.empty())
    throw SimulationError("serving: a segment's numbers are malformed: " + problem);
  SegmentTime t;
  t.seconds = v[0], t.compute_s = v[1], t.comm_s = v[2], t.flops = v[3], t.bytes = v[4], t.link_bytes = v[5];
  t.transfers = static_cast<std::uint64_t>(v[6]), t.wrong = static_cast<std::uint64_t>(v[7]);
  t.bound = v[8] > 0 ? "hbm" : "compute";
  t.comm_bound = v[9] < 0 ? "latency" : "link:" + tiers.at(static_cast<std::size_t>(v[9]));
  t.engine = static_cast<Engine>(static_cast<int>(v[10]));
  t.tabled = static_cast<unsigned>(v[11]), t.fell_back = static_cast<unsigned>(v[12]);
  if (t.wrong > 0) t.first_error = "the layer's all-to-allv did not verify";
  return t;
}

}  // namespace ultrasim
