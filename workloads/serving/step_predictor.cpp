#include "workloads/serving/step_predictor.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "topology/base/errors.hpp"
#include "topology/base/log.hpp"
#include "topology/base/output_file.hpp"

namespace ultrasim {

StepTimePredictor::StepTimePredictor(int stage_chips, Simulate simulate, Encode encode, Decode decode,
                                     std::string cache_dir, std::string description)
    : stage_chips_(stage_chips),
      simulate_(std::move(simulate)),
      encode_(std::move(encode)),
      decode_(std::move(decode)),
      cache_dir_(std::move(cache_dir)),
      description_(std::move(description)) {
  if (cache_dir_.empty()) return;
  // Created if it is not there; refused, before any work, if it cannot be (a file, no permission).
  std::error_code error;
  std::filesystem::create_directories(cache_dir_, error);
  if (!std::filesystem::is_directory(cache_dir_))
    throw InputError("grid_cache '" + cache_dir_ + "' is not a directory and cannot be made one" +
                     (error ? " (" + error.message() + ")" : ""));
  if (::access(cache_dir_.c_str(), W_OK | X_OK) != 0)
    throw InputError("grid_cache '" + cache_dir_ + "': cannot write there (" + std::strerror(errno) + ")");
}

std::uint64_t StepTimePredictor::ladder_next(std::uint64_t n) {
  return n < 2 ? 2 : (n & (n - 1)) == 0 ? n / 2 * 3 : n / 3 * 4;
}

std::pair<std::uint64_t, std::uint64_t> StepTimePredictor::bracket(std::uint64_t n) {
  std::uint64_t lo = 1, hi = 1;
  while (hi < n) lo = hi, hi = ladder_next(hi);
  return {hi == n ? n : lo, hi};
}

SegmentTime StepTimePredictor::price(int stage, const std::vector<std::uint64_t>& chip_tokens) {
  std::uint64_t m = 1, T = 0;
  for (const auto n : chip_tokens) m = std::max(m, n), T += n;
  T = std::max(T, m);
  const auto S = static_cast<std::uint64_t>(stage_chips_);
  const auto [m0, m1] = bracket(m);
  const auto [t0, t1] = bracket(T);
  auto at = [&](std::uint64_t mm, std::uint64_t tt) { return point(stage, mm, std::clamp(tt, mm, mm * S)); };
  const double u = m1 == m0 ? 0 : static_cast<double>(m - m0) / static_cast<double>(m1 - m0);
  const double v = t1 == t0 ? 0 : static_cast<double>(T - t0) / static_cast<double>(t1 - t0);
  const SegmentTime p00 = at(m0, t0), p01 = at(m0, t1), p10 = at(m1, t0), p11 = at(m1, t1);
  auto mix = [&](double a, double b, double c, double d) {
    return (1 - u) * ((1 - v) * a + v * b) + u * ((1 - v) * c + v * d);
  };
  SegmentTime t = u < 0.5 ? (v < 0.5 ? p00 : p01) : (v < 0.5 ? p10 : p11);  // bounds, engine: the nearest
  t.tabled = p00.tabled | p01.tabled | p10.tabled | p11.tabled;
  t.fell_back = p00.fell_back | p01.fell_back | p10.fell_back | p11.fell_back;
  for (double SegmentTime::*f :
       {&SegmentTime::seconds, &SegmentTime::compute_s, &SegmentTime::fixed_s, &SegmentTime::comm_s,
        &SegmentTime::flops, &SegmentTime::bytes, &SegmentTime::link_bytes})
    t.*f = mix(p00.*f, p01.*f, p10.*f, p11.*f);
  return t;
}

SegmentTime StepTimePredictor::point(int stage, std::uint64_t m, std::uint64_t T) {
  const auto key = std::make_tuple(stage, m, T);
  if (const auto it = points_.find(key); it != points_.end()) return it->second;
  const std::string shared = cache_key(stage, m, T);
  if (const auto cached = read_cache(shared)) return points_.emplace(key, *cached).first->second;
  const SegmentTime t = simulate_(stage, m, T);
  points_.emplace(key, t);
  write_cache(shared, t);
  return t;
}

std::string StepTimePredictor::cache_key(int stage, std::uint64_t m, std::uint64_t T) const {
  if (cache_dir_.empty()) return "";
  return description_ + "|" + std::to_string(stage) + "|" + std::to_string(m) + "|" + std::to_string(T);
}

std::string StepTimePredictor::cache_path(const std::string& key) const {
  char name[40];
  std::snprintf(name, sizeof name, "/grid-%016zx.json", std::hash<std::string>{}(key));
  return cache_dir_ + name;
}

std::optional<SegmentTime> StepTimePredictor::read_cache(const std::string& key) const {
  if (key.empty()) return std::nullopt;
  const std::string path = cache_path(key);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (j.at("key").get<std::string>() != key) return std::nullopt;  // another point's (a hash collision)
    return decode_(j.at("values").get<std::vector<double>>());
  } catch (const std::exception& e) {  // damaged (torn, edited, another program's): simulated again
    logger().warn("grid cache: {} is damaged ({}); its point is simulated again and the file rewritten", path,
                  printable_text(e.what(), false));
    return std::nullopt;
  }
}

void StepTimePredictor::write_cache(const std::string& key, const SegmentTime& t) const {
  if (key.empty()) return;
  const std::string path = cache_path(key), temp = path + "." + std::to_string(::getpid());
  bool written = false;
  {
    std::ofstream out(temp);
    out << nlohmann::json{{"key", key}, {"values", encode_(t)}}.dump() << "\n";
    out.flush();
    written = static_cast<bool>(out);
  }
  if (written && std::rename(temp.c_str(), path.c_str()) == 0) return;
  // A full disk or a directory gone: the run goes on; later runs simulate this point again.
  const int why = errno;
  std::remove(temp.c_str());
  logger().warn("grid cache: cannot write {} ({}); this point is not shared with later runs", path,
                std::strerror(why));
}

}  // namespace ultrasim
