#include "collectives/chip.hpp"

#include <map>
#include <stdexcept>

#include "topology/base/errors.hpp"
#include "topology/base/mix.hpp"

namespace ultrasim {

std::uint64_t contribution_key(int rank, int chunk) {
  // Well mixed, so sums of distinct keys collide only with probability ~2^-64.
  return splitmix64(pair_key(static_cast<std::uint32_t>(rank), static_cast<std::uint32_t>(chunk)));
}

RequestPtr Transport::spawn(std::function<void(Transport&)>) {
  throw SimulationError(
      "this engine runs one activity per chip; concurrent activities (a Chakra trace's "
      "streams) run on the flow engines (--engine auto, flow or fast)");
}

std::size_t Transport::wait_any(const std::vector<RequestPtr>&) {
  throw SimulationError("this engine runs one activity per chip: there is nothing to wait for");
}

RequestPtr ForwardingTransport::spawn(std::function<void(Transport&)> body) {
  return inner_.spawn([this, body = std::move(body)](Transport& child) {
    const std::unique_ptr<Transport> mine = wrap(child);
    body(mine ? *mine : child);
  });
}

Chip::Chip(Transport& transport, std::vector<std::uint64_t> slot_bytes, std::vector<Contribution> initial,
           std::optional<double> reduce_bandwidth)
    : transport_(transport),
      slot_bytes_(std::move(slot_bytes)),
      slots_(std::move(initial)),
      reduce_bandwidth_(reduce_bandwidth) {
  if (slots_.size() != slot_bytes_.size()) throw std::logic_error("Chip: slot sizes and contents differ");
}

std::vector<int> slot_range(int first, int count) {
  std::vector<int> slots(count);
  for (int i = 0; i < count; ++i) slots[i] = first + i;
  return slots;
}

RequestPtr Chip::send(int dst, int step, std::span<const int> slots) {
  Message message;
  message.pieces.reserve(slots.size());
  for (int s : slots) message.pieces.push_back(Piece{s, slot_bytes_.at(s), slots_.at(s)});
  return transport_.send(dst, std::move(message), step);
}

RequestPtr Chip::send_to(int dst, int step, int slot, int dst_slot) {
  Message message;
  message.pieces.push_back(Piece{dst_slot, slot_bytes_.at(slot), slots_.at(slot)});
  return transport_.send(dst, std::move(message), step);
}

RequestPtr Chip::send_sized(int dst, int step, int slot, int dst_slot, std::uint64_t bytes) {
  Message message;
  message.pieces.push_back(Piece{dst_slot, bytes, slots_.at(slot)});
  return transport_.send(dst, std::move(message), step);
}

Transport::SwitchRequests Chip::switch_reduce(int sw, const std::vector<int>& members, int step,
                                              const std::vector<int>& slots, const std::vector<int>& wants) {
  Message message;
  message.pieces.reserve(slots.size());
  for (int s : slots) message.pieces.push_back(Piece{s, slot_bytes_.at(s), slots_.at(s)});
  return transport_.switch_reduce(sw, members, std::move(message), wants, step);
}

RequestPtr Chip::send_to(int dst, int step, std::span<const SlotMove> moves) {
  Message message;
  message.pieces.reserve(moves.size());
  for (const SlotMove& m : moves)
    message.pieces.push_back(Piece{m.to, slot_bytes_.at(m.from), slots_.at(m.from)});
  return transport_.send(dst, std::move(message), step);
}

void Chip::reduce(const RequestPtr& received) {
  for (const Piece& piece : received->message.pieces) slots_.at(piece.slot).add(piece.content);
  if (reduce_bandwidth_) {
    double seconds = static_cast<double>(received->message.bytes()) / *reduce_bandwidth_;
    if (seconds > 0) transport_.compute(seconds, "reduce");
  }
}

void Chip::copy(const RequestPtr& received) {
  for (const Piece& piece : received->message.pieces) {
    slots_.at(piece.slot) = piece.content;
    slot_bytes_.at(piece.slot) = piece.bytes;
  }
}

}  // namespace ultrasim

namespace ultrasim {

Message switch_result(const std::vector<int>& members, const std::vector<Message>& contributions, int member,
                      const std::vector<int>& wants) {
  std::map<int, Piece> sums;        // slot -> summed piece
  std::map<int, int> contributors;  // slot -> how many members contributed to it
  std::map<int, int> only;          // slot -> the member, when just one did
  for (std::size_t i = 0; i < members.size(); ++i)
    for (const Piece& piece : contributions[i].pieces) {
      auto [it, fresh] = sums.emplace(piece.slot, Piece{piece.slot, piece.bytes, {}});
      it->second.content.add(piece.content);
      ++contributors[piece.slot];
      only[piece.slot] = members[i];
    }
  Message out;
  for (int slot : wants) {
    auto it = sums.find(slot);
    if (it == sums.end()) continue;
    if (contributors[slot] == 1 && only[slot] == member) continue;
    out.pieces.push_back(it->second);
  }
  return out;
}

}  // namespace ultrasim
