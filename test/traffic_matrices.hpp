// Deterministic all-to-allv traffic matrices for tests (splitmix64, so the same on every platform), and
// a writer for the files `ultrasim run --traffic-matrix` reads.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace ultrasim::test {

using Rows = std::vector<std::vector<std::uint64_t>>;

class SplitMix {
 public:
  explicit SplitMix(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }  // 0 .. n-1

 private:
  std::uint64_t state_;
};

// Every entry (diagonal included) independently 0 with probability zero_percent/100, else 1..max_bytes.
inline Rows random_matrix(int p, std::uint64_t seed, std::uint64_t max_bytes, int zero_percent = 25) {
  SplitMix rng(seed);
  Rows rows(p, std::vector<std::uint64_t>(p));
  for (auto& row : rows)
    for (auto& entry : row)
      entry = static_cast<int>(rng.below(100)) < zero_percent ? 0 : 1 + rng.below(max_bytes);
  return rows;
}

// bytes(r, r+k) = part[k] for every r: every round of the pairwise exchange is the same on every chip.
// Some distances carry nothing (about one in five).
inline Rows circulant_matrix(int p, std::uint64_t seed, std::uint64_t max_bytes) {
  SplitMix rng(seed);
  std::vector<std::uint64_t> part(p);
  for (auto& b : part) b = rng.below(5) == 0 ? 0 : 1 + rng.below(max_bytes);
  Rows rows(p, std::vector<std::uint64_t>(p));
  for (int r = 0; r < p; ++r)
    for (int k = 0; k < p; ++k) rows[r][(r + k) % p] = part[k];
  return rows;
}

// Every chip sends chip d the same amount (MoE dispatch where each chip routes tokens with the same
// expert popularity): column d is constant, chip `hot` receiving the most.
inline Rows row_identical_matrix(int p, std::uint64_t seed, std::uint64_t max_bytes, int hot) {
  SplitMix rng(seed);
  std::vector<std::uint64_t> column(p);
  for (auto& b : column) b = 1 + rng.below(max_bytes);
  column[hot] = 2 * max_bytes;
  return Rows(p, column);
}

inline void write_matrix_json(const std::string& path, const Rows& rows) {
  std::ofstream out(path);
  out << "{\"bytes\": [";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out << (r ? ",\n" : "\n") << "[";
    for (std::size_t c = 0; c < rows[r].size(); ++c) out << (c ? ", " : "") << rows[r][c];
    out << "]";
  }
  out << "]}\n";
}

}  // namespace ultrasim::test
