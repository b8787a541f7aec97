// One chip as an algorithm sees it: its rank, its buffer slots (with their sizes and semantic content)
// and the operations of a step — send slots, receive, wait, reduce or copy what arrived.
#pragma once

#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

#include "collectives/transport.hpp"

namespace ultrasim {

// What a chip does with data that arrives: add it to its slots, or keep it (overwrite).
enum class OnArrival { kReduce, kKeep };

// Slots first, first+1, ..., first+count-1 (a range of chunks to send in one message).
std::vector<int> slot_range(int first, int count);

// One slot of a message whose pieces land in other slots at the receiver: the sender's `from`, the
// receiver's `to`.
struct SlotMove {
  int from = 0, to = 0;
};

class Chip {
 public:
  // `slot_bytes[i]` is the size of slot i; `initial` its content (same length). `reduce_bandwidth`
  // charges bytes / rate of chip time per reduction; nullopt makes reductions free.
  Chip(Transport& transport, std::vector<std::uint64_t> slot_bytes, std::vector<Contribution> initial,
       std::optional<double> reduce_bandwidth);

  int rank() const { return transport_.rank(); }
  // The fabric as this chip sees it (a program that runs collectives of its own, a training step).
  Transport& transport() { return transport_; }
  int size() const { return transport_.size(); }

  // Sends the current content of `slots` to `dst`, landing in the same slots there.
  RequestPtr send(int dst, int step, std::initializer_list<int> slots) {
    return send(dst, step, std::span<const int>(slots.begin(), slots.size()));
  }
  RequestPtr send(int dst, int step, const std::vector<int>& slots) {
    return send(dst, step, std::span<const int>(slots));
  }
  RequestPtr send(int dst, int step, std::span<const int> slots);
  // Sends slot `slot` to `dst`, landing in slot `dst_slot` there.
  RequestPtr send_to(int dst, int step, int slot, int dst_slot);
  // Sends several slots in one message, each landing in its own `to` slot at `dst`.
  RequestPtr send_to(int dst, int step, std::span<const SlotMove> moves);
  // Sends `bytes` carrying slot `slot`'s content to `dst`, landing in `dst_slot` there: part of a slot
  // (a micro-chunk) or data of another size derived from it (an expert's outputs for the tokens it got).
  RequestPtr send_sized(int dst, int step, int slot, int dst_slot, std::uint64_t bytes);
  RequestPtr recv(int src, int step) { return transport_.recv(src, step); }
  // Keeps the chip busy computing for `seconds` (recorded under `what`).
  void compute(double seconds, const std::string& what) { transport_.compute(seconds, what); }
  // Contributes `slots` to the in-switch reduction `step` at switch `sw` among `members` and asks back the
  // sums of `wants` (Transport::switch_reduce); copy() the result once it has arrived.
  Transport::SwitchRequests switch_reduce(int sw, const std::vector<int>& members, int step,
                                          const std::vector<int>& slots, const std::vector<int>& wants);
  void wait(const std::vector<RequestPtr>& requests) { transport_.wait_all(requests); }

  // Adds what a completed receive brought into its slots (charging the reduction cost).
  void reduce(const RequestPtr& received);
  // Overwrites slots with what a completed receive brought, content and size: a slot may hold a piece
  // in transit whose size differs from the slot's own (Bruck all-to-all parks other chips' parts).
  void copy(const RequestPtr& received);
  void accept(const RequestPtr& received, OnArrival on_arrival) {
    on_arrival == OnArrival::kReduce ? reduce(received) : copy(received);
  }
  // Local copy between own slots, content and size (free: no fabric involved).
  void copy_local(int from_slot, int to_slot) {
    slots_.at(to_slot) = slots_.at(from_slot);
    slot_bytes_.at(to_slot) = slot_bytes_.at(from_slot);
  }

  const std::vector<Contribution>& slots() const { return slots_; }
  std::uint64_t slot_bytes(int slot) const { return slot_bytes_.at(slot); }

 private:
  Transport& transport_;
  std::vector<std::uint64_t> slot_bytes_;
  std::vector<Contribution> slots_;
  std::optional<double> reduce_bandwidth_;
};

}  // namespace ultrasim
