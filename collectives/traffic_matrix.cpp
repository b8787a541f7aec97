#include "collectives/traffic_matrix.hpp"

#include <algorithm>
#include <string>

#include "topology/base/errors.hpp"

namespace ultrasim {
namespace {

std::uint64_t checked_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) throw InputError("traffic matrix: the volumes exceed 2^64 bytes");
  return sum;
}

}  // namespace

TrafficMatrix::TrafficMatrix(const std::vector<std::vector<std::uint64_t>>& rows)
    : p_(static_cast<int>(rows.size())) {
  if (rows.empty()) throw InputError("traffic matrix: no rows; expected p rows of p byte counts");
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != rows.size())
      throw InputError("traffic matrix: row " + std::to_string(r) + " has " + std::to_string(rows[r].size()) +
                       " entries but there are " + std::to_string(rows.size()) +
                       " rows; expected a square p x p matrix (row = sender, column = receiver)");
    rows_.insert(rows_.end(), rows[r].begin(), rows[r].end());
  }
  std::uint64_t total = 0;  // every row and column sum is at most the total
  for (std::uint64_t n : rows_) total = checked_add(total, n);
}

TrafficMatrix TrafficMatrix::uniform(std::uint64_t bytes, int p) {
  std::uint64_t total = 0;
  if (__builtin_mul_overflow(bytes, static_cast<std::uint64_t>(p), &total))
    throw InputError("traffic matrix: the volumes exceed 2^64 bytes");
  return TrafficMatrix(bytes, p);
}

std::uint64_t TrafficMatrix::bytes(int src, int dst) const {
  if (!rows_.empty()) return rows_[static_cast<std::size_t>(src) * p_ + dst];
  const std::uint64_t part = static_cast<std::uint64_t>((dst - src + p_) % p_);
  return uniform_bytes_ / p_ + (part < uniform_bytes_ % p_ ? 1 : 0);
}

std::uint64_t TrafficMatrix::sent_by(int chip) const {
  std::uint64_t sum = 0;
  for (int d = 0; d < p_; ++d) sum += bytes(chip, d);
  return sum;
}

std::uint64_t TrafficMatrix::received_by(int chip) const {
  std::uint64_t sum = 0;
  for (int s = 0; s < p_; ++s) sum += bytes(s, chip);
  return sum;
}

std::uint64_t TrafficMatrix::total() const {
  if (rows_.empty()) return uniform_bytes_ * p_;
  std::uint64_t sum = 0;
  for (std::uint64_t n : rows_) sum += n;
  return sum;
}

std::uint64_t TrafficMatrix::load(int chip) const {
  return std::max(sent_by(chip), received_by(chip));
}

int TrafficMatrix::busiest_chip() const {
  if (rows_.empty()) return 0;  // every chip sends and receives `bytes`
  int busiest = 0;
  for (int r = 1; r < p_; ++r)
    if (load(r) > load(busiest)) busiest = r;
  return busiest;
}

std::uint64_t TrafficMatrix::fabric_load(int chip) const {
  return std::max(sent_by(chip), received_by(chip)) - bytes(chip, chip);
}

}  // namespace ultrasim
