#include "sim/chip_program.hpp"

#include <algorithm>
#include <exception>
#include <tuple>

#include "collectives/chip.hpp"
#include "topology/errors.hpp"

namespace ultrasim {

void run_chip(const PreparedJob& job, Transport& transport, ChipOutcomes& out) {
  const int p = job.p(), r = transport.rank();
  try {
    Layout layout =
        make_layout(job.collective->kind, job.job.bytes, p, job.algorithm->chunks(p), r, job.traffic.get());
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
  result.verdict = verify(job.collective->kind, p, job.algorithm->chunks(p), out.finals, job.traffic.get());
  std::sort(result.transfer_records.begin(), result.transfer_records.end(), [](const auto& a, const auto& b) {
    return std::tie(a.start, a.src, a.dst, a.step, a.path) < std::tie(b.start, b.src, b.dst, b.step, b.path);
  });
  return result;
}

}  // namespace ultrasim
