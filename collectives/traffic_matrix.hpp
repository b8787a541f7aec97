// The per-pair volumes of an all-to-allv: bytes(src, dst) is what chip src sends to chip dst (row =
// sender, column = receiver). The diagonal is a chip's own part: copied locally, it never crosses the
// fabric. A zero entry moves nothing, not even a message.
#pragma once

#include <cstdint>
#include <vector>

namespace ultrasim {

class TrafficMatrix {
 public:
  // Throws InputError unless `rows` is non-empty and square (every row has as many entries as there
  // are rows), or if a chip's row or column overflows 64 bits.
  explicit TrafficMatrix(const std::vector<std::vector<std::uint64_t>>& rows);

  // The uniform matrix of all-to-all size `bytes` (nccl-tests' size: the total each chip sends, own part
  // included): chip s sends chip d part (d - s) mod p of even_chunks(bytes, p). When p divides `bytes`
  // this is all-to-all's own layout; otherwise the one-byte-larger parts are spread so that every chip
  // also receives exactly `bytes`. Stored in O(1).
  static TrafficMatrix uniform(std::uint64_t bytes, int p);

  int p() const { return p_; }
  std::uint64_t bytes(int src, int dst) const;
  std::uint64_t sent_by(int chip) const;      // its row, own part included
  std::uint64_t received_by(int chip) const;  // its column, own part included
  std::uint64_t total() const;                // every entry, diagonal included
  // The most-loaded chip and its volume, max(sent_by, received_by), own part included as nccl-tests
  // counts it for all-to-all: all-to-allv's `size` (the lowest rank on a tie).
  int busiest_chip() const;
  std::uint64_t busiest_load() const { return load(busiest_chip()); }
  // What chip `chip` must push into or pull from the fabric: max of its row and column without the
  // diagonal (the lower bound's numerator).
  std::uint64_t fabric_load(int chip) const;
  bool is_uniform() const { return rows_.empty(); }

 private:
  TrafficMatrix(std::uint64_t uniform_bytes, int p) : p_(p), uniform_bytes_(uniform_bytes) {}
  std::uint64_t load(int chip) const;
  int p_ = 0;
  std::uint64_t uniform_bytes_ = 0;
  std::vector<std::uint64_t> rows_;  // row-major p x p; empty for the uniform matrix
};

}  // namespace ultrasim
