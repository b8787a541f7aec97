#include "sim/chip_program.hpp"

#include <algorithm>
#include <exception>
#include <optional>
#include <tuple>
#include <utility>

#include "collectives/chip.hpp"
#include "collectives/group_transport.hpp"
#include "topology/base/errors.hpp"

namespace ultrasim {
namespace {

// A slow chip (slow-chip:RANK=FACTOR): the transport of `inner` with every computation `factor` x longer.
class SlowTransport : public Transport {
 public:
  SlowTransport(Transport& inner, double factor) : inner_(inner), factor_(factor) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  RequestPtr send(int dst, Message message, int step) override {
    return inner_.send(dst, std::move(message), step);
  }
  RequestPtr recv(int src, int step) override { return inner_.recv(src, step); }
  void wait_all(const std::vector<RequestPtr>& requests) override { inner_.wait_all(requests); }
  SwitchRequests switch_reduce(int sw, const std::vector<int>& members, Message message,
                               const std::vector<int>& wants, int step) override {
    return inner_.switch_reduce(sw, members, std::move(message), wants, step);
  }
  void compute(double seconds, const std::string& what) override { inner_.compute(seconds * factor_, what); }
  double now() const override { return inner_.now(); }

 private:
  Transport& inner_;
  double factor_;
};

}  // namespace

void run_chip(const PreparedJob& job, Transport& engine_transport, ChipOutcomes& out) {
  const int r = engine_transport.rank(), p = job.group_size();
  try {
    // With groups, a chip outside every group has nothing to do; one inside runs as its local rank.
    const bool grouped_run = !job.groups.members.empty();
    const int group = grouped_run ? job.groups.group_of[r] : -1;
    if (grouped_run && group < 0) {
      out.finish[r] = engine_transport.now();
      return;
    }
    // Stragglers (workloads/faults.hpp): a late chip idles until its start; a slow one computes slower.
    if (job.faults.start[r] > 0) engine_transport.compute(job.faults.start[r], "late start");
    std::optional<SlowTransport> slow;
    if (job.faults.compute_scale[r] != 1) slow.emplace(engine_transport, job.faults.compute_scale[r]);
    std::optional<GroupTransport> grouped;
    if (group >= 0)
      grouped.emplace(slow ? static_cast<Transport&>(*slow) : engine_transport, job.groups.members[group],
                      job.groups.position[r]);
    Transport& transport = grouped ? static_cast<Transport&>(*grouped)
                           : slow  ? static_cast<Transport&>(*slow)
                                   : engine_transport;
    Layout layout = make_layout(job.collective->kind, job.job.bytes, p, job.algorithm->chunks(p),
                                transport.rank(), job.traffic.get());
    Chip chip(transport, std::move(layout.slot_bytes), std::move(layout.initial),
              job.topology->params().optional_rate("reduce_bandwidth"));
    job.algorithm->run(chip);
    out.finals[r] = chip.slots();
    out.finish[r] = transport.now();
  } catch (const std::exception& e) {
    out.failures.push_back("chip" + std::to_string(r) + ": " + e.what());
  }
}

SimResult conclude(const PreparedJob& job, const ChipOutcomes& out,
                   const std::vector<std::string>& unmatched_receives, SimResult result) {
  const int p = job.p();
  if (!out.failures.empty()) throw SimulationError("simulation failed: " + out.failures.front());
  std::vector<std::string> stuck;
  for (int r = 0; r < p; ++r)
    if (out.finish[r] < 0) stuck.push_back("chip" + std::to_string(r));
  if (!stuck.empty())
    throw SimulationError("deadlock: " + std::to_string(stuck.size()) + " chip(s) never finished, first " +
                          stuck.front() +
                          (unmatched_receives.empty() ? "" : "; " + unmatched_receives.front()));
  result.time_s = p > 0 ? *std::max_element(out.finish.begin(), out.finish.end()) : 0.0;
  result.chip_finish = out.finish;
  const int g = job.group_size();
  if (job.groups.members.empty()) {
    result.verdict = verify(job.collective->kind, p, job.algorithm->chunks(p), out.finals, job.traffic.get());
  } else {  // each group holds what its collective promises
    for (std::size_t k = 0; k < job.groups.members.size(); ++k) {
      std::vector<std::vector<Contribution>> finals;
      for (int r : job.groups.members[k]) finals.push_back(out.finals[r]);
      const Verdict v = verify(job.collective->kind, g, job.algorithm->chunks(g), finals, job.traffic.get());
      if (v.wrong > 0 && result.verdict.wrong == 0)
        result.verdict.first_error = "group " + std::to_string(k) + ": " + v.first_error;
      result.verdict.wrong += v.wrong;
    }
  }
  std::sort(result.transfer_records.begin(), result.transfer_records.end(), [](const auto& a, const auto& b) {
    return std::tie(a.start, a.src, a.dst, a.step, a.path) < std::tie(b.start, b.src, b.dst, b.step, b.path);
  });
  return result;
}

}  // namespace ultrasim
