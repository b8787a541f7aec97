// Schedule algorithm: runs a schedule read from a file (schedule.hpp; collectives/README.md), the way
// MSCCL's interpreter runs an XML program (Cowan et al., "MSCCLang", ASPLOS 2023).
//   alltoall only: copy the own part locally (slot r to slot p+r), as every built-in all-to-all does;
//   for each step k in which chip r takes part:
//     start every send of the step (the slot content held at the start of the step),
//     post every receive, wait for all, then copy or add what arrived.
//   Transfers of one step with the same src, dst and op travel as one message (as a built-in sends
//   several slots at once), so a multi-slot send written as data costs what the built-in's does.
// model_s = the steps on per-chip clocks (rounds_time): a chip starts step k when its step k-1 ended,
// a message takes bytes/β(src, dst) to leave and arrives α(src, dst) later, reductions cost bytes/R.
// Exact (the simulator agrees) where no two transfers that overlap in time share a link direction,
// e.g. a ring schedule on switch:N or ring:N; elsewhere it ignores contention and is a lower bound.
#include <map>
#include <stdexcept>
#include <tuple>

#include "collectives/cost.hpp"
#include "collectives/schedule.hpp"

namespace ultrasim {
namespace {

// The transfers of one step from one chip to another with one op: one message.
struct ScheduleMessage {
  int src = 0, dst = 0;
  OnArrival op = OnArrival::kReduce;
  std::vector<SlotMove> moves;
};

// What one chip does in one step.
struct ChipStep {
  int step = 0;
  std::vector<const ScheduleMessage*> sends, receives;
};

class ScheduleAlgorithm : public Algorithm {
 public:
  explicit ScheduleAlgorithm(std::shared_ptr<const Schedule> schedule)
      : schedule_(std::move(schedule)), plan_(schedule_->chips) {
    for (const auto& transfers : schedule_->steps) {
      auto& messages = messages_.emplace_back();
      std::map<std::tuple<int, int, OnArrival>, std::size_t> index;  // (src, dst, op) -> message
      for (const ScheduleTransfer& t : transfers) {
        auto [it, added] = index.emplace(std::make_tuple(t.src, t.dst, t.op), messages.size());
        if (added) messages.push_back({t.src, t.dst, t.op, {}});
        messages[it->second].moves.push_back({t.chunk, t.dst_chunk});
      }
    }
    // Messages stay put from here on, so the per-chip plan can point into them. Both ends list a
    // pair's messages in the same order, which is how the transport matches sends to receives.
    for (int k = 0; k < static_cast<int>(messages_.size()); ++k)
      for (const ScheduleMessage& m : messages_[k]) {
        step_of(m.src, k).sends.push_back(&m);
        step_of(m.dst, k).receives.push_back(&m);
      }
  }

  int chunks(int) const override { return schedule_->chunks; }

  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    if (p != schedule_->chips)
      throw std::logic_error("schedule for " + std::to_string(schedule_->chips) + " chips");
    if (schedule_->collective->kind == CollectiveKind::kAlltoall) me.copy_local(r, p + r);
    for (const ChipStep& s : plan_[r]) {
      std::vector<RequestPtr> requests, received;
      for (const ScheduleMessage* m : s.sends) requests.push_back(me.send_to(m->dst, s.step, m->moves));
      for (const ScheduleMessage* m : s.receives) received.push_back(me.recv(m->src, s.step));
      requests.insert(requests.end(), received.begin(), received.end());
      me.wait(requests);
      for (std::size_t i = 0; i < received.size(); ++i) me.accept(received[i], s.receives[i]->op);
    }
  }

  double model_s(const CostInput& in) const override {
    const int p = schedule_->chips;
    if (in.p != p) throw std::logic_error("schedule for " + std::to_string(p) + " chips");
    // Slot sizes: the same on every chip except for all-to-all, whose receive slots follow the rank.
    const CollectiveKind kind = schedule_->collective->kind;
    const bool per_chip = kind == CollectiveKind::kAlltoall;
    std::vector<std::vector<std::uint64_t>> sizes;
    for (int r = 0; r < (per_chip ? p : 1); ++r)
      sizes.push_back(make_layout(kind, in.bytes, p, schedule_->chunks, r).slot_bytes);
    return rounds_time(in, static_cast<int>(messages_.size()), [&](int k, std::vector<RoundTransfer>& out) {
      for (const ScheduleMessage& m : messages_[k]) {
        std::uint64_t bytes = 0;
        for (const SlotMove& move : m.moves) bytes += sizes[per_chip ? m.src : 0][move.from];
        out.push_back({m.src, m.dst, bytes, m.op == OnArrival::kReduce});
      }
    });
  }

 private:
  ChipStep& step_of(int chip, int k) {
    auto& steps = plan_[chip];
    if (steps.empty() || steps.back().step != k) steps.push_back({k, {}, {}});
    return steps.back();
  }

  std::shared_ptr<const Schedule> schedule_;
  std::vector<std::vector<ScheduleMessage>> messages_;  // by step
  std::vector<std::vector<ChipStep>> plan_;             // by chip: the steps it takes part in
};

}  // namespace

std::unique_ptr<Algorithm> schedule_algorithm(std::shared_ptr<const Schedule> schedule) {
  return std::make_unique<ScheduleAlgorithm>(std::move(schedule));
}

AlgorithmEntry schedule_entry(std::shared_ptr<const Schedule> schedule) {
  std::string description =
      schedule->name.empty() ? "schedule read from " + schedule->source : schedule->name;
  return {schedule->collective->name,
          kScheduleFilePrefix + schedule->source,
          description,
          [schedule](const ParamSet&) { return schedule_algorithm(schedule); },
          {},
          /*posts_to_all=*/true};
}

}  // namespace ultrasim
