#include "sim/engines/chip_program.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "topology/base/errors.hpp"

namespace ultrasim {
namespace {

// A slow chip (slow-chip:RANK=FACTOR): the transport of `inner` with every computation `factor` x longer.
class SlowTransport : public ForwardingTransport {
 public:
  SlowTransport(Transport& inner, double factor) : ForwardingTransport(inner), factor_(factor) {}
  void compute(double seconds, const std::string& what) override { inner_.compute(seconds * factor_, what); }

 protected:
  std::unique_ptr<Transport> wrap(Transport& child) override {
    return std::make_unique<SlowTransport>(child, factor_);
  }

 private:
  double factor_;
};

}  // namespace

void run_chip(const Machine& machine, Program& program, Transport& engine_transport, ChipOutcomes& out) {
  const int r = engine_transport.rank();
  try {
    if (!program.takes_part(r)) {
      out.finish[r] = engine_transport.now();
      return;
    }
    // Stragglers (sim/machine/faults.hpp): a late chip idles until its start; a slow one computes slower.
    if (machine.faults.start[r] > 0) engine_transport.compute(machine.faults.start[r], "late start");
    std::optional<SlowTransport> slow;
    if (machine.faults.compute_scale[r] != 1) slow.emplace(engine_transport, machine.faults.compute_scale[r]);
    Transport& transport = slow ? static_cast<Transport&>(*slow) : engine_transport;
    program.run(transport);
    out.finish[r] = transport.now();
  } catch (const std::exception& e) {
    out.failures.push_back("chip" + std::to_string(r) + ": " + e.what());
  }
}

void sort_records(std::vector<TransferRecord>& records) {
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
    return std::tie(a.start, a.src, a.dst, a.step, a.path) < std::tie(b.start, b.src, b.dst, b.step, b.path);
  });
}

SimResult conclude(const Machine& machine, const Program& program, const ChipOutcomes& out,
                   const std::vector<std::string>& unmatched_receives, SimResult result) {
  const int p = machine.p();
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
  result.verdict = program.verdict();
  sort_records(result.transfer_records);
  return result;
}

}  // namespace ultrasim
