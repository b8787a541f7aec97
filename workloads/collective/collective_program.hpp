// A prepared collective job as the program its chips run (sim/machine/program.hpp): each chip builds the
// collective's buffer layout (collectives/chip.hpp), runs the algorithm on it and keeps its final slots;
// the verdict checks them against the collective's promise, group by group when the job runs on groups
// of chips (a chip outside every group takes no part).
#pragma once

#include <vector>

#include "sim/machine/program.hpp"
#include "workloads/collective/collective_job.hpp"

namespace ultrasim {

class CollectiveProgram : public Program {
 public:
  explicit CollectiveProgram(const PreparedJob& job);
  bool takes_part(int rank) const override;
  void run(Transport& transport) override;
  Verdict verdict() const override;
  // switch-reduce: its chip-switch routes are fixed.
  std::string link_fault_refusal() const override;

 private:
  const PreparedJob& job_;
  std::vector<std::vector<Contribution>> finals_;  // per chip
};

}  // namespace ultrasim
