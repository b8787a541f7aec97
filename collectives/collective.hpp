// The collectives: what each promises (its buffer layout, initial and final contents), its bus-bandwidth
// factor (nccl-tests'), and the semantic verifier that checks every chip ended with what was promised.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/traffic_matrix.hpp"
#include "collectives/transport.hpp"

namespace ultrasim {

enum class CollectiveKind {
  kAllreduce,
  kAllgather,
  kReducescatter,
  kAlltoall,
  kBroadcast,
  kReduce,
  kAlltoallv
};

// The root of broadcast and reduce (a root parameter may come later).
constexpr int kRoot = 0;

struct CollectiveInfo {
  CollectiveKind kind;
  std::string name;         // "allreduce"
  std::string description;  // one line, including what `size` means (nccl-tests' convention)
  double (*busbw_factor)(int p);
};

const std::vector<CollectiveInfo>& collectives();
// Throws InputError "unknown collective 'X'; did you mean ...".
const CollectiveInfo& find_collective(const std::string& name);

// Splits `bytes` into `parts` chunks, the first bytes mod parts one byte larger (never truncates).
std::vector<std::uint64_t> even_chunks(std::uint64_t bytes, int parts);

// The p parts of `bytes` (even_chunks), each cut into chunks/p slots: part c is slots c*m .. c*m+m-1 with
// m = chunks/p. Throws std::logic_error unless chunks is a positive multiple of p.
std::vector<std::uint64_t> part_slots(std::uint64_t bytes, int p, int chunks);

// The buffer of one chip for a collective of `bytes` over p chips, cut in `chunks` chunks:
//   allreduce:      chunks slots; every chip starts with its own contribution in each.
//   reducescatter:  chunks slots, a multiple of p (part_slots: part c = what chip c ends with, usually one
//                   slot); every chip starts full.
//   allgather:      chunks slots, a multiple of p (part_slots); chip r starts with only its part.
//   alltoall:       2p slots: 0..p-1 what r sends to each chip, p..2p-1 what r receives from each; then
//                   chunks - p empty scratch slots (parts in transit) when an algorithm asks for more.
//   broadcast:      chunks slots; the root starts with its data in each, the others empty.
//   reduce:         chunks slots; every chip starts with its own contribution in each; the root ends
//                   with the sum.
//   alltoallv:      as alltoall, with slot j of chip r sized traffic.bytes(r, j) and slot p+s sized
//                   traffic.bytes(s, r): a chip learns what it sends and receives from its slot sizes.
// `traffic`: alltoallv's p x p matrix (`bytes` is then unused); required for alltoallv (std::logic_error
// if null or of another p), ignored by the other collectives.
struct Layout {
  std::vector<std::uint64_t> slot_bytes;
  std::vector<Contribution> initial;
};
Layout make_layout(CollectiveKind kind, std::uint64_t bytes, int p, int chunks, int rank,
                   const TrafficMatrix* traffic = nullptr);

// Checks the final slots of every chip. Returns the number of wrong (chip, chunk) results — the
// analogue of nccl-tests' #wrong — and describes the first in `first_error`. For alltoallv a slot whose
// pair has zero bytes must stay empty (nothing moves for it); `traffic` as for make_layout.
struct Verdict {
  std::uint64_t wrong = 0;
  std::string first_error;
};
Verdict verify(CollectiveKind kind, int p, int chunks, const std::vector<std::vector<Contribution>>& finals,
               const TrafficMatrix* traffic = nullptr);

}  // namespace ultrasim
