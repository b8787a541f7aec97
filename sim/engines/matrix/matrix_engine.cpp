#include "sim/engines/matrix/matrix_engine.hpp"

#include <algorithm>
#include <limits>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

#include "sim/engines/chip_program.hpp"
#include "sim/engines/flow/flow_engine.hpp"
#include "sim/engines/flow/fluid_flows.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/log.hpp"

namespace ultrasim {
namespace {

constexpr double kNever = -1;

class MatrixEngine {
 public:
  MatrixEngine(const Machine& machine, std::vector<MatrixPhase> phases, bool record, double window)
      : machine_(machine),
        phases_(std::move(phases)),
        p_(machine.p()),
        record_(record),
        overhead_(machine.transfer_overhead()),
        flows_(link_direction_capacities(*machine.topology), window, window),
        at_(phases_.size() * p_),
        finish_(p_, kNever),
        ready_last_(p_, kNever),
        sends_left_(p_, 0),
        last_left_(p_, 0) {
    for (std::size_t k = 0; k < phases_.size(); ++k)
      for (int d = 0; d < p_; ++d) {
        Arrivals& in = arrivals(static_cast<int>(k), d);
        for (int s = 0; s < p_; ++s)
          if (s != d && phases_[k].matrix->bytes(s, d) > 0)
            ++in.left, in.expected += phases_[k].matrix->bytes(s, d);
      }
  }

  SimResult run(Engine engine);

 private:
  // Phase k at chip d: when d sent it (kNever: not yet), what of it is still to reach d, and when the
  // latest of it arrives.
  struct Arrivals {
    double sent = kNever;
    int left = 0;  // messages whose flows have not all ended
    std::uint64_t expected = 0, received = 0;
    double delivered = 0;
  };
  struct Message {
    int src, dst, phase, parts_left = 0;
  };
  struct FlowInfo {
    int message;
    double latency;
    std::uint64_t bytes;  // the part's
    int record;           // index into the records, or -1
  };
  struct Timer {  // chip `chip` sends its next phase at `at`
    double at;
    std::uint64_t order;
    int chip;
    bool operator>(const Timer& o) const { return at != o.at ? at > o.at : order > o.order; }
  };

  Arrivals& arrivals(int phase, int chip) { return at_[static_cast<std::size_t>(phase) * p_ + chip]; }
  double gap(int phase, int chip) const {
    const auto& g = phases_[phase].gap_s;
    return g.empty() ? 0.0 : g[chip] * machine_.faults.compute_scale[chip];
  }
  void schedule(int chip, int phase, double ready);
  void send_phase(int chip, int phase);
  void part_ended(const FlowInfo& flow);
  void ready(int chip, int phase);
  void try_finish(int chip);
  void send_next();  // the earliest timer's chip sends its next phase

  const Machine& machine_;
  const std::vector<MatrixPhase> phases_;
  const int p_;
  const bool record_;
  const double overhead_;
  FluidFlows flows_;
  std::vector<Arrivals> at_;  // [phase][chip]
  std::vector<Message> messages_;
  std::vector<FlowInfo> flow_info_;  // by flow id
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::vector<int> next_phase_;  // per chip, the phase its timer sends
  std::uint64_t order_ = 0;
  double now_ = 0;
  std::vector<double> finish_, ready_last_;
  std::vector<int> sends_left_;  // per chip: its flows in flight
  std::vector<double> last_left_;
  SimResult result_;
};

// Chip `chip` is ready for `phase` at `ready`: its gap (compute) first, then it sends.
void MatrixEngine::schedule(int chip, int phase, double ready) {
  const double at = ready + gap(phase, chip);
  if (record_ && at > ready) result_.compute_records.push_back({chip, phases_[phase].gap_what, ready, at});
  next_phase_[chip] = phase;
  timers_.push(Timer{at, order_++, chip});
}

void MatrixEngine::send_phase(int r, int k) {
  const TrafficMatrix& m = *phases_[k].matrix;
  arrivals(k, r).sent = now_;
  for (int j = 1; j < p_; ++j) {
    const int d = (r + j) % p_;
    const std::uint64_t bytes = m.bytes(r, d);
    if (bytes == 0) continue;
    const int message = static_cast<int>(messages_.size());
    messages_.push_back(Message{r, d, k});
    machine_.routes->for_each_flow(r, d, bytes, [&](const PathShare& share, std::uint64_t part) {
      const MaxMinShare::Path resources = link_directions(share.path);
      const int id = flows_.start(now_, {resources.data(), resources.size()}, static_cast<double>(part));
      if (flow_info_.size() <= static_cast<std::size_t>(id)) flow_info_.resize(id + 1);
      flow_info_[id] = FlowInfo{message, share.path.latency + overhead_, part, -1};
      if (record_) {
        flow_info_[id].record = static_cast<int>(result_.transfer_records.size());
        result_.transfer_records.push_back(
            TransferRecord{r, d, part, phases_[k].step, share.index, now_, now_, now_});
      }
      ++messages_.back().parts_left, ++sends_left_[r];
    });
    ++result_.transfers;
    result_.bytes_sent += bytes;
  }
  if (arrivals(k, r).left == 0) ready(r, k);
}

// A part's flow ended at now_: delivered after its latency; its message is in once every part is.
void MatrixEngine::part_ended(const FlowInfo& flow) {
  Message& message = messages_[flow.message];
  Arrivals& in = arrivals(message.phase, message.dst);
  in.delivered = std::max(in.delivered, now_ + flow.latency);
  if (flow.record >= 0) {
    TransferRecord& x = result_.transfer_records[flow.record];
    x.wire_end = now_, x.end = now_ + flow.latency;
  }
  in.received += flow.bytes;
  --sends_left_[message.src];
  last_left_[message.src] = now_;
  try_finish(message.src);
  if (--message.parts_left > 0) return;
  if (--in.left == 0 && in.sent != kNever) ready(message.dst, message.phase);
}

void MatrixEngine::ready(int chip, int phase) {
  const Arrivals& in = arrivals(phase, chip);
  const double at = std::max(in.sent, in.delivered);
  if (phase + 1 < static_cast<int>(phases_.size())) return schedule(chip, phase + 1, at);
  ready_last_[chip] = at;
  try_finish(chip);
}

void MatrixEngine::try_finish(int chip) {
  if (ready_last_[chip] != kNever && sends_left_[chip] == 0 && finish_[chip] == kNever)
    finish_[chip] = std::max(ready_last_[chip], last_left_[chip]);
}

void MatrixEngine::send_next() {
  const int chip = timers_.top().chip;
  timers_.pop();
  send_phase(chip, next_phase_[chip]);
}

SimResult MatrixEngine::run(Engine engine) {
  next_phase_.assign(p_, 0);
  for (int r = 0; r < p_; ++r) {
    const double start = machine_.faults.start[r];
    if (record_ && start > 0) result_.compute_records.push_back({r, "late start", 0, start});
    schedule(r, 0, start);
  }
  for (;;) {
    // Every chip that sends now starts its flows before the next solve (next_end solves).
    while (!timers_.empty() && timers_.top().at <= now_) send_next();
    const double flow_end = flows_.next_end();
    const double timer = timers_.empty() ? std::numeric_limits<double>::infinity() : timers_.top().at;
    if (flow_end == std::numeric_limits<double>::infinity() && timer == flow_end) break;
    if (timer < flow_end) {
      now_ = timer;
      continue;
    }
    const std::vector<int> ended = flows_.end_next();
    now_ = flows_.now();
    for (int id : ended) part_ended(flow_info_[id]);
  }
  logger().debug("the matrix engine: {} flows, {} flow solves", flow_info_.size(),
                 flows_.share().flows_solved());
  result_.engine = engine;
  result_.chip_finish = finish_;
  result_.time_s = p_ > 0 ? *std::max_element(finish_.begin(), finish_.end()) : 0.0;
  // The engine's own check: every chip finished, and received exactly its column of every matrix.
  for (std::size_t i = 0; i < at_.size(); ++i)
    if (at_[i].received != at_[i].expected || finish_[i % p_] == kNever)
      if (result_.verdict.wrong++ == 0)
        result_.verdict.first_error = "phase " + std::to_string(i / p_) + " chip" + std::to_string(i % p_) +
                                      ": received " + std::to_string(at_[i].received) + " bytes, expected " +
                                      std::to_string(at_[i].expected);
  sort_records(result_.transfer_records);
  return std::move(result_);
}

// 1 % of the busy period's age, for ends and starts: results/engines gives its error.
constexpr double kMatrixWindow = 0.01;

}  // namespace

EngineOutcome simulate_matrix(const Machine& machine, const Program& program, bool record, double window,
                              Engine engine) {
  if (machine.faults.touches_links())
    return {std::nullopt, "link faults are modelled by the SimGrid engine only"};
  std::vector<MatrixPhase> phases = program.matrix_form();
  if (phases.empty()) return {std::nullopt, program.matrix_refusal()};
  for (const MatrixPhase& phase : phases)
    if (!phase.matrix || phase.matrix->p() != machine.p())
      throw InputError("the traffic matrix has " + std::to_string(phase.matrix ? phase.matrix->p() : 0) +
                       " chips, the fabric " + std::to_string(machine.p()));
  MatrixEngine matrix(machine, std::move(phases), record, window);
  return {matrix.run(engine), {}, false};
}

EngineOutcome run_matrix(const Machine& machine, Program& program, const RunOptions& options) {
  return simulate_matrix(machine, program, options.record, kMatrixWindow, Engine::kMatrix);
}

}  // namespace ultrasim
