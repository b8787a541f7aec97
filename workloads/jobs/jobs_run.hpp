// Several jobs on one fabric (`"workload": "jobs"`): each job is a workload of another kind (a collective,
// an MoE layer, a training step) on chips of its own, starting at its own time; all of them run in one
// simulation and share the fabric's links and switches. Each job is prepared on its part of the fabric
// (topology SPEC@CHIPS: the same links, only its chips as endpoints, its rank r the r-th chip listed),
// runs through a renaming of its ranks to the fabric's chips, and is reported as it would be alone: its
// kind's own result, computed from its chips' records with time 0 at its start. Beside it, the time it
// takes alone on the same chips (the same part of the fabric, nothing else running: simulated too, in a
// child process) and its slowdown, shared / alone.
//
//   {"workload": "jobs", "topology": "trn3", "set": {...}, "engine": "auto",
//    "jobs": [{"name": "train", "chips": "0-71", "start": "0us", "workload": {...} or "FILE"}, ...]}
//
// The file's `topology` and `set` are the fabric's: every job runs on them (a job's own "set" adds the
// parameters of its workload and may not change the fabric's). Chips of two jobs may not overlap. A job's
// workload leaves `topology` out (or names the file's), has no faults and, for an MoE layer, one batch.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "workloads/registry.hpp"

namespace ultrasim {

// The result (fields: workloads/README.md#several-jobs-on-one-fabric). Throws InputError naming the file,
// the job and the field, SimulationError when the shared run or a job's run alone fails.
// `trace`: a Chrome trace of the shared run (every chip, the fabric's ranks); empty for none.
nlohmann::ordered_json run_jobs(const nlohmann::json& workload, const std::string& file,
                                const std::string& command, const std::string& trace);
std::string jobs_table(const nlohmann::ordered_json& result);

}  // namespace ultrasim
