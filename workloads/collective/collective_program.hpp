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
  // A direct all-to-all or all-to-allv on every chip is one exchange of its matrix, after the stack's
  // launch latency (the traffic-matrix engine prices it); nothing else is.
  std::vector<MatrixPhase> matrix_form() const override;
  std::string matrix_refusal() const override;

 private:
  const PreparedJob& job_;
  std::vector<std::vector<Contribution>> finals_;  // per chip
  mutable std::unique_ptr<TrafficMatrix> matrix_;  // the exchange's matrix, built by matrix_form()
};

}  // namespace ultrasim
