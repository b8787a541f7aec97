#include "workloads/serving/step_accounting.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "topology/base/errors.hpp"

namespace ultrasim {
namespace {

// The sums of one step, group by group.
class StepAccount {
 public:
  StepAccount(SegmentPricer& pricer, std::size_t micro_batches)
      : pricer_(pricer), chip_(pricer.chip()), micro_batches_(static_cast<double>(micro_batches)) {}

  // A segment priced alone, into its group's streams and the step's totals.
  void add(const Segment& seg, const SegmentTime& t) {
    const double r = seg.repeat;  // a compact plan's segment stands for r identical ones
    if (pricer_.tracing()) pricer_.record(seg, t, clock_);
    clock_ += t.seconds;
    C_ += r * t.compute_s, M_ += r * t.comm_s;
    if (t.compute_s > t.fixed_s) c_bound_[t.bound] += r * (t.compute_s - t.fixed_s);
    if (t.fixed_s > 0) c_bound_["overhead"] += r * t.fixed_s;
    if (t.comm_s > 0) m_bound_[t.comm_bound] += r * t.comm_s;
    out_.parts_s[seg.what] += r * t.seconds;
    if (seg.kind == Segment::kMoe && seg.micro_batch == 0) out_.moe_s.push_back(t.seconds);
    if (seg.kind == Segment::kAllreduce)
      out_.tp_bytes = seg.bytes, out_.tp_s = t.seconds, out_.tp_count += seg.repeat;
    out_.flops += r * t.flops, out_.bytes += r * t.bytes, out_.link_bytes += r * t.link_bytes;
    out_.transfers += static_cast<std::uint64_t>(seg.repeat) * t.transfers;
    out_.tabled |= t.tabled, out_.fell_back |= t.fell_back;
    if (t.wrong > 0 && out_.wrong == 0)
      out_.first_error = seg.what + " of layer " + std::to_string(seg.layer) + ": " + t.first_error;
    out_.wrong += t.wrong;
  }

  // The end of a group: its layer's fixed cost (`layer`), then its streams, overlapped or one after the
  // other, into the step's time and bounds.
  void close_group(bool overlapped, bool layer, int stage, double repeat) {
    if (layer && chip_.layer_overhead() > 0) {  // each micro-batch's pass through the layer
      C_ += repeat * chip_.layer_overhead() * micro_batches_;
      c_bound_["overhead"] += repeat * chip_.layer_overhead() * micro_batches_;
      if (pricer_.tracing()) record_fixed(stage, "layer overhead", chip_.layer_overhead());
    }
    // Overlapped: the communication takes comm_share of the chip from the compute beside it.
    const double t = overlapped ? chip_.overlapped_seconds(C_, M_) : C_ + M_;
    out_.seconds += t;
    if (overlapped) {
      const bool compute_bound = t > M_;
      auto& stream = compute_bound ? c_bound_ : m_bound_;
      const double sum = compute_bound ? C_ : M_;
      for (const auto& [what, s] : stream) out_.bound_s[what] += sum > 0 ? t * s / sum : 0;
    } else {
      for (const auto& [what, s] : c_bound_) out_.bound_s[what] += s;
      for (const auto& [what, s] : m_bound_) out_.bound_s[what] += s;
    }
    C_ = M_ = 0, c_bound_.clear(), m_bound_.clear();
  }

  // The host's part of the step (its requests: the busiest group's), on its critical path but for what it
  // hides behind the chips; the step's time into the trace.
  StepTime finish(double host_requests) {
    const double host = chip_.host_seconds(out_.seconds, host_requests);
    if (host > 0) {
      out_.seconds += host, out_.bound_s["overhead"] += host;
      if (pricer_.tracing()) {
        for (int c = 0; c < pricer_.layout().chips; ++c)
          pricer_.trace().compute_records.push_back({c, "step overhead (host)", clock_, clock_ + host});
        clock_ += host;
      }
    }
    if (pricer_.tracing()) pricer_.trace().time_s = out_.seconds;
    return out_;
  }

 private:
  // While tracing, a fixed cost shows on every chip of the stage as a segment of its own.
  void record_fixed(int stage, const std::string& what, double seconds) {
    const int S = pricer_.layout().stage_chips();
    for (int c = 0; c < S; ++c)
      pricer_.trace().compute_records.push_back({c + stage * S, what, clock_, clock_ + seconds});
    clock_ += seconds;
  }

  SegmentPricer& pricer_;
  const ChipModel& chip_;
  double micro_batches_;
  StepTime out_;
  double clock_ = 0;      // while tracing: where the next segment starts
  double C_ = 0, M_ = 0;  // the group's compute and communication streams
  std::map<std::string, double> c_bound_, m_bound_;
};

}  // namespace

StepTime account_step(SegmentPricer& pricer, const std::vector<StepPlan>& plans) {
  const bool overlap = plans.size() == 2;
  pricer.prefetch(plans);
  const std::size_t n = plans.front().segments.size();
  for (const auto& plan : plans)
    if (plan.segments.size() != n) throw SimulationError("serving: micro-batches with different plans");
  StepAccount account(pricer, plans.size());
  for (std::size_t i = 0; i < n; ++i) {
    const Segment& head = plans.front().segments[i];
    for (const auto& plan : plans) account.add(plan.segments[i], pricer.price(plan.segments[i], overlap));
    const bool last_of_group = i + 1 == n || plans.front().segments[i + 1].layer != head.layer ||
                               plans.front().segments[i + 1].stage != head.stage;
    if (last_of_group)
      account.close_group(overlap && head.layer >= 0, head.layer >= 0, head.stage, head.repeat);
  }
  double host_requests = 0, balance = 1;  // micro-batches: one host schedules them all
  for (const auto& plan : plans)
    host_requests += static_cast<double>(plan.host_requests),
        balance = std::min(balance, plan.attention_balance);
  StepTime out = account.finish(host_requests);
  out.attention_balance = balance;
  return out;
}

}  // namespace ultrasim
