#include "collectives/collective.hpp"

#include <algorithm>
#include <stdexcept>

#include "topology/base/errors.hpp"
#include "topology/base/suggest.hpp"

namespace ultrasim {
namespace {

double allreduce_factor(int p) {
  return 2.0 * (p - 1) / p;
}
double spread_factor(int p) {
  return static_cast<double>(p - 1) / p;
}
double rooted_factor(int) {
  return 1.0;
}

// Every rank's contribution to chunk c, each exactly once.
Contribution full(int p, int chunk) {
  Contribution all;
  for (int r = 0; r < p; ++r) all.add(contribution_of(r, chunk));
  return all;
}

std::string describe(int chip, int slot, const Contribution& got, const Contribution& want) {
  return "chip" + std::to_string(chip) + " slot " + std::to_string(slot) + " holds " +
         std::to_string(got.count) + " contribution(s)" +
         (got.count == want.count ? " with wrong content" : "") + ", expected " + std::to_string(want.count);
}

const TrafficMatrix& traffic_of(const TrafficMatrix* traffic, int p) {
  if (!traffic || traffic->p() != p)
    throw std::logic_error("alltoallv needs a traffic matrix for its p chips");
  return *traffic;
}

}  // namespace

const std::vector<CollectiveInfo>& collectives() {
  static const std::vector<CollectiveInfo> kTable{
      {CollectiveKind::kAllreduce, "allreduce",
       "every chip ends with the sum of all buffers (size: the buffer)", allreduce_factor},
      {CollectiveKind::kAllgather, "allgather",
       "every chip ends with every chip's part (size: the total output)", spread_factor},
      {CollectiveKind::kReducescatter, "reducescatter",
       "chip r ends with part r of the sum (size: the total input)", spread_factor},
      {CollectiveKind::kAlltoall, "alltoall",
       "chip r sends part j to chip j (size: total sent per chip, own part included)", spread_factor},
      {CollectiveKind::kBroadcast, "broadcast", "every chip ends with chip 0's buffer (size: the buffer)",
       rooted_factor},
      {CollectiveKind::kReduce, "reduce", "chip 0 ends with the sum of all buffers (size: the buffer)",
       rooted_factor},
      {CollectiveKind::kAlltoallv, "alltoallv",
       "chip r sends chip j its own amount, from --traffic-matrix (size: the most-loaded chip's volume)",
       spread_factor},
  };
  return kTable;
}

const CollectiveInfo& find_collective(const std::string& name) {
  return find_by_name(collectives(), name, "collective");
}

std::vector<std::uint64_t> even_chunks(std::uint64_t bytes, int parts) {
  std::vector<std::uint64_t> out(parts, bytes / parts);
  for (std::uint64_t i = 0; i < bytes % parts; ++i) ++out[i];
  return out;
}

std::vector<std::uint64_t> part_slots(std::uint64_t bytes, int p, int chunks) {
  if (p < 1 || chunks < p || chunks % p != 0)
    throw std::logic_error("part_slots: " + std::to_string(chunks) + " slots do not cut " +
                           std::to_string(p) + " parts evenly");
  std::vector<std::uint64_t> slots;
  for (std::uint64_t part : even_chunks(bytes, p)) {
    auto pieces = even_chunks(part, chunks / p);
    slots.insert(slots.end(), pieces.begin(), pieces.end());
  }
  return slots;
}

Layout make_layout(CollectiveKind kind, std::uint64_t bytes, int p, int chunks, int rank,
                   const TrafficMatrix* traffic) {
  Layout layout;
  const bool exchange = kind == CollectiveKind::kAlltoall || kind == CollectiveKind::kAlltoallv;
  layout.initial.reserve(exchange ? std::max(chunks, 2 * p) : chunks);  // p chips hold this each: no slack
  switch (kind) {
    case CollectiveKind::kBroadcast:
      layout.slot_bytes = even_chunks(bytes, chunks);
      for (int c = 0; c < chunks; ++c)
        layout.initial.push_back(rank == kRoot ? contribution_of(kRoot, c) : Contribution{});
      break;
    case CollectiveKind::kReduce:
    case CollectiveKind::kAllreduce:
      layout.slot_bytes = even_chunks(bytes, chunks);
      for (int c = 0; c < chunks; ++c) layout.initial.push_back(contribution_of(rank, c));
      break;
    case CollectiveKind::kReducescatter:
      layout.slot_bytes = part_slots(bytes, p, chunks);
      for (int s = 0; s < chunks; ++s) layout.initial.push_back(contribution_of(rank, s));
      break;
    case CollectiveKind::kAllgather:
      layout.slot_bytes = part_slots(bytes, p, chunks);
      layout.initial.assign(chunks, Contribution{});
      for (int s = rank * (chunks / p); s < (rank + 1) * (chunks / p); ++s)
        layout.initial[s] = contribution_of(rank, s);
      break;
    case CollectiveKind::kAlltoall: {
      // Chunk j of every sender is the part destined to chip j, so chip r receives p chunks of size
      // even_chunks[r].
      auto parts = even_chunks(bytes, p);
      layout.slot_bytes = parts;
      layout.slot_bytes.insert(layout.slot_bytes.end(), p, parts[rank]);
      for (int j = 0; j < p; ++j) layout.initial.push_back(contribution_of(rank, j));
      layout.initial.insert(layout.initial.end(), p, Contribution{});
      if (chunks > p) {
        layout.slot_bytes.insert(layout.slot_bytes.end(), chunks - p, 0);
        layout.initial.insert(layout.initial.end(), chunks - p, Contribution{});
      }
      break;
    }
    case CollectiveKind::kAlltoallv: {
      const TrafficMatrix& m = traffic_of(traffic, p);
      for (int j = 0; j < p; ++j) layout.slot_bytes.push_back(m.bytes(rank, j));
      for (int s = 0; s < p; ++s) layout.slot_bytes.push_back(m.bytes(s, rank));
      for (int j = 0; j < p; ++j) layout.initial.push_back(contribution_of(rank, j));
      layout.initial.insert(layout.initial.end(), p, Contribution{});
      break;
    }
  }
  return layout;
}

Verdict verify(CollectiveKind kind, int p, int chunks, const std::vector<std::vector<Contribution>>& finals,
               const TrafficMatrix* traffic) {
  Verdict verdict;
  auto check = [&](int chip, int slot, const Contribution& want) {
    const Contribution& got = finals[chip][slot];
    if (got == want) return;
    if (verdict.wrong++ == 0) verdict.first_error = describe(chip, slot, got, want);
  };
  // The sum of every rank's contribution to each chunk, computed once: O(p x chunks), not per chip.
  std::vector<Contribution> totals;
  if (kind == CollectiveKind::kAllreduce || kind == CollectiveKind::kReduce ||
      kind == CollectiveKind::kReducescatter)
    for (int c = 0; c < chunks; ++c) totals.push_back(full(p, c));
  const int per_part = chunks / p;  // all-gather and reduce-scatter: slots per chip's part
  for (int r = 0; r < p; ++r) {
    switch (kind) {
      case CollectiveKind::kAllreduce:
        for (int c = 0; c < chunks; ++c) check(r, c, totals[c]);
        break;
      case CollectiveKind::kReducescatter:
        for (int s = r * per_part; s < (r + 1) * per_part; ++s) check(r, s, totals[s]);
        break;
      case CollectiveKind::kAllgather:
        for (int s = 0; s < chunks; ++s) check(r, s, contribution_of(s / per_part, s));
        break;
      case CollectiveKind::kAlltoall:
        for (int s = 0; s < p; ++s) check(r, p + s, contribution_of(s, r));
        break;
      case CollectiveKind::kAlltoallv:
        for (int s = 0; s < p; ++s)
          check(r, p + s, traffic_of(traffic, p).bytes(s, r) > 0 ? contribution_of(s, r) : Contribution{});
        break;
      case CollectiveKind::kBroadcast:
        for (int c = 0; c < chunks; ++c) check(r, c, contribution_of(kRoot, c));
        break;
      case CollectiveKind::kReduce:
        if (r == kRoot)
          for (int c = 0; c < chunks; ++c) check(r, c, totals[c]);
        break;
    }
  }
  return verdict;
}

}  // namespace ultrasim
