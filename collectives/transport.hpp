// What an algorithm running on one chip can do with the fabric. sim/ implements it over SimGrid; the
// tests implement it with a recording fake. Every call is made from the chip's own actor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ultrasim {

// The semantic content of a buffer slot: how many contributions it holds and the sum of their keys
// (each rank's contribution to each chunk has its own random 64-bit key). A slot is right when both
// match what the collective promises; a missing or doubled contribution changes the count or the sum.
struct Contribution {
  std::uint64_t count = 0;
  std::uint64_t hash = 0;
  void add(const Contribution& other) { count += other.count, hash += other.hash; }
  bool operator==(const Contribution&) const = default;
};

// The key of rank `rank`'s contribution to chunk `chunk` (splitmix64 of the pair).
std::uint64_t contribution_key(int rank, int chunk);
inline Contribution contribution_of(int rank, int chunk) {
  return {1, contribution_key(rank, chunk)};
}

// One slot's worth of data in flight: where it lands at the receiver, its size, its content.
struct Piece {
  int slot = 0;
  std::uint64_t bytes = 0;
  Contribution content;
};

struct Message {
  std::vector<Piece> pieces;
  std::uint64_t bytes() const {
    std::uint64_t total = 0;
    for (const auto& p : pieces) total += p.bytes;
    return total;
  }
};

// A started send or posted receive. Implementations derive from it; after wait_all a receive's
// `message` holds what arrived.
struct Request {
  virtual ~Request() = default;
  Message message;
};
using RequestPtr = std::shared_ptr<Request>;

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Starts moving `message` to chip `dst` and returns at once (one-sided, like a DMA write: the transfer
  // does not wait for the receive to be posted). `step` labels it in records and traces and, with the
  // pair of chips, matches it to a receive: sends and receives with the same (src, dst, step) pair up
  // in posting order.
  virtual RequestPtr send(int dst, Message message, int step) = 0;
  // Posts a receive of the next message from `src` labelled `step`.
  virtual RequestPtr recv(int src, int step) = 0;
  // Blocks until every request completed: a send when its data has left, a receive when its data has
  // arrived (flow end plus path latency).
  virtual void wait_all(const std::vector<RequestPtr>& requests) = 0;
  // Keeps the chip busy for `seconds` (reductions, compute), recorded under `what`.
  virtual void compute(double seconds, const std::string& what) = 0;
  virtual double now() const = 0;
};

}  // namespace ultrasim
