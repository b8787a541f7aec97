// Runs an MoE layer (workloads/moe/moe.hpp) on the fabric: routes the batch, builds the MoeLayer program,
// simulates it (one SimGrid run in this process; further random batches each in a child process, since
// SimGrid runs once per process), checks that every chip got its tokens and their outputs back, and
// reports times, load, drops, energy and cost.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "workloads/moe/moe.hpp"

namespace ultrasim {

struct MoeRunRequest {
  MoeConfig config;
  std::string command;  // as typed, recorded in the result
  std::string engine = "auto";
  int check_engine = 0;  // --check-engine N: the layers of batches 0..N-1 on the fast and the flow engine
  std::string trace;     // --trace FILE (the first batch), empty for none
  std::string
      traffic;  // --traffic-out FILE: the first batch's dispatch matrix (run --traffic-matrix reads it)
};

// The result (its fields: workloads/README.md). Throws InputError / SimulationError as run does.
nlohmann::ordered_json run_moe(const MoeRunRequest& request);
// The result as a short table for people.
std::string moe_table(const nlohmann::ordered_json& result);

}  // namespace ultrasim
