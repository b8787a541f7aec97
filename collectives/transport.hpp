// What an algorithm running on one chip can do with the fabric. sim/ implements it over SimGrid; the
// tests implement it with a recording fake. Every call is made from the chip's own actor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
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

// What a switch reduction delivers to member `member`: the slot-wise sums of `contributions` (one message
// per member, in `members` order) over the slots it `wants`, leaving out slots only it contributed.
Message switch_result(const std::vector<int>& members, const std::vector<Message>& contributions, int member,
                      const std::vector<int>& wants);

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The chip that rank `local` of this transport is, as a rank of the topology the running algorithm was
  // placed on (Algorithm::place): the identity for a chip's own transport; a group's (GroupTransport) maps
  // its local ranks to its members. Hierarchical algorithms read their members' levels through it.
  virtual int chip_of(int local) const { return local; }
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
  // In-switch reduction (NVLS / SHARP-like), one-sided like send. Every chip of `members` calls it once
  // with the same `step`, contributing `message` to a reduction at switch `sw` (an index into the
  // topology's switches). The switch adds the contributions slot by slot; once all have arrived (and its
  // reduction engine, one reduction at a time, has spent bytes / its rate) it sends each member the sums of
  // the slots that member `wants`, leaving out slots only that member contributed (it holds them already).
  // `sent` completes when the contribution has left the chip; `result` when the sums have arrived, its
  // `message` holding them.
  struct SwitchRequests {
    RequestPtr sent, result;
  };
  virtual SwitchRequests switch_reduce(int sw, const std::vector<int>& members, Message message,
                                       const std::vector<int>& wants, int step) = 0;
  // Keeps the chip busy for `seconds` (reductions, compute), recorded under `what`.
  virtual void compute(double seconds, const std::string& what) = 0;
  virtual double now() const = 0;

  // Starts `body` now as another activity of this chip, beside the caller and every other one (as a
  // GPU's compute stream, its communication streams and its host thread run side by side): `body` gets a
  // transport of its own on this chip, whose sends and receives are the chip's and whose compute does not
  // slow another activity's. A wait for the returned request (wait_all, wait_any) ends when `body` has
  // returned; a chip's part must wait for every activity it started. The flow engines run activities; the
  // others run one activity per chip and refuse (this default throws SimulationError).
  virtual RequestPtr spawn(std::function<void(Transport&)> body);
  // Blocks until one of `activities` (requests spawn returned) has ended; returns the index of the first
  // ended one in the list. SimulationError where spawn is refused.
  virtual std::size_t wait_any(const std::vector<RequestPtr>& activities);
};

// A transport that passes every call to `inner`: the base of wrappers that change one thing (a slow chip's
// compute, a job's send counters) and forward the rest.
class ForwardingTransport : public Transport {
 public:
  explicit ForwardingTransport(Transport& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  int chip_of(int local) const override { return inner_.chip_of(local); }
  RequestPtr send(int dst, Message message, int step) override {
    return inner_.send(dst, std::move(message), step);
  }
  RequestPtr recv(int src, int step) override { return inner_.recv(src, step); }
  void wait_all(const std::vector<RequestPtr>& requests) override { inner_.wait_all(requests); }
  SwitchRequests switch_reduce(int sw, const std::vector<int>& members, Message message,
                               const std::vector<int>& wants, int step) override {
    return inner_.switch_reduce(sw, members, std::move(message), wants, step);
  }
  void compute(double seconds, const std::string& what) override { inner_.compute(seconds, what); }
  double now() const override { return inner_.now(); }
  // A spawned activity runs on the inner transport's activity, wrapped as this one (wrap()).
  RequestPtr spawn(std::function<void(Transport&)> body) override;
  std::size_t wait_any(const std::vector<RequestPtr>& activities) override {
    return inner_.wait_any(activities);
  }

 protected:
  // This wrapper around `child`, a spawned activity's inner transport; it must not outlive this one.
  // nullptr (the default): the activity runs on `child` itself.
  virtual std::unique_ptr<Transport> wrap(Transport& child) { return nullptr; }
  Transport& inner_;
};

}  // namespace ultrasim
