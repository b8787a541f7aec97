#include "workloads/collective/collective_program.hpp"

#include <optional>
#include <utility>

#include "collectives/chip.hpp"
#include "collectives/group_transport.hpp"
#include "workloads/collective/collective_job.hpp"

namespace ultrasim {

CollectiveProgram::CollectiveProgram(const PreparedJob& job) : job_(job), finals_(job.p()) {}

bool CollectiveProgram::takes_part(int rank) const {
  return job_.groups.members.empty() || job_.groups.group_of[rank] >= 0;
}

void CollectiveProgram::run(Transport& chip_transport) {
  const int r = chip_transport.rank(), p = job_.group_size();
  // With groups, a chip runs as its local rank in its group.
  std::optional<GroupTransport> grouped;
  if (!job_.groups.members.empty())
    grouped.emplace(chip_transport, job_.groups.members[job_.groups.group_of[r]], job_.groups.position[r]);
  Transport& transport = grouped ? static_cast<Transport&>(*grouped) : chip_transport;
  Layout layout = make_layout(job_.collective->kind, job_.job.bytes, p, job_.algorithm->chunks(p),
                              transport.rank(), job_.traffic.get());
  Chip chip(transport, std::move(layout.slot_bytes), std::move(layout.initial),
            model_of(job_.topology->params()).reduce_bandwidth);
  // The stack's launch latency: the library's fixed cost before the first byte moves (model_s adds it).
  const double launch = job_.protocol.launch_for(job_.entry->name);
  if (launch > 0) transport.compute(launch, "launch");
  job_.algorithm->run(chip);
  finals_[r] = chip.slots();
}

Verdict CollectiveProgram::verdict() const {
  const CollectiveKind kind = job_.collective->kind;
  if (job_.groups.members.empty())
    return verify(kind, job_.p(), job_.algorithm->chunks(job_.p()), finals_, job_.traffic.get());
  Verdict verdict;  // each group holds what its collective promises
  const int g = job_.group_size();
  for (std::size_t k = 0; k < job_.groups.members.size(); ++k) {
    std::vector<std::vector<Contribution>> finals;
    for (int r : job_.groups.members[k]) finals.push_back(finals_[r]);
    const Verdict v = verify(kind, g, job_.algorithm->chunks(g), finals, job_.traffic.get());
    if (v.wrong > 0 && verdict.wrong == 0)
      verdict.first_error = "group " + std::to_string(k) + ": " + v.first_error;
    verdict.wrong += v.wrong;
  }
  return verdict;
}

// Why it is no single exchange (empty: it is one).
std::string CollectiveProgram::matrix_refusal() const {
  const CollectiveKind kind = job_.collective->kind;
  if ((kind != CollectiveKind::kAlltoall && kind != CollectiveKind::kAlltoallv) ||
      job_.entry->name != "direct")
    return not_an_exchange(job_.collective->name + " " + job_.entry->name);
  if (!job_.groups.members.empty())
    return "it prices one exchange on every chip, not one per group (--groups)";
  if (kind == CollectiveKind::kAlltoall && job_.job.bytes < static_cast<std::uint64_t>(job_.p()))
    return "an all-to-all of fewer bytes than chips sends empty messages, which cost their latency";
  return {};
}

std::vector<MatrixPhase> CollectiveProgram::matrix_form() const {
  if (!matrix_refusal().empty()) return {};
  const int p = job_.p();
  const TrafficMatrix* matrix = job_.traffic && !job_.traffic->is_uniform() ? job_.traffic.get() : nullptr;
  if (!matrix && !matrix_) {  // what each chip's layout sends each other (slot j: its part for chip j)
    std::vector<std::vector<std::uint64_t>> rows(p);
    for (int r = 0; r < p; ++r) {
      Layout layout = make_layout(job_.collective->kind, job_.job.bytes, p, job_.algorithm->chunks(p), r,
                                  job_.traffic.get());
      rows[r].assign(layout.slot_bytes.begin(), layout.slot_bytes.begin() + p);
    }
    matrix_ = std::make_unique<TrafficMatrix>(rows);
  }
  const double launch = job_.protocol.launch_for(job_.entry->name);
  return {MatrixPhase{matrix ? matrix : matrix_.get(), 0, std::vector<double>(p, launch), "launch"}};
}

std::string CollectiveProgram::link_fault_refusal() const {
  if (job_.entry->name != "switch-reduce") return {};
  return "link-down and switch-down faults cannot run with switch-reduce (its chip-switch routes are fixed); "
         "use degrade, or another algorithm";
}

}  // namespace ultrasim
