// The workloads: what runs on the fabric. Each kind is one row of workload_kinds(); the table drives
// `ultrasim list workloads`, `ultrasim workload FILE` (the file's "workload" field names the row, with a
// "did you mean" when it names none) and the points of a workload sweep (`ultrasim sweep --file` with a
// "workload" key: each point is a workload file the row checks before anything runs, then runs).
// Adding a workload = its file (reader, runner and a `WorkloadKind f()` entry) + one row in workloads.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engines/records.hpp"
#include "sim/machine/program.hpp"

namespace ultrasim {

// How a run reports: the format of standard output, a trace file (empty: none), the command recorded.
struct WorkloadOutput {
  std::string format = "table";
  std::string trace;
  std::string command;
};

// A workload ready to simulate: the machine it runs on, the program its chips run, and its result from a
// run of that program (the result `ultrasim workload FILE --format json` prints). The jobs of a "jobs"
// file (workloads/jobs/jobs_run.hpp) are prepared on their part of the fabric (topology SPEC@CHIPS) and run
// together on the whole of it; each is then reported from its own chips' records.
class PreparedWorkload {
 public:
  virtual ~PreparedWorkload() = default;
  virtual Machine& machine() = 0;
  virtual Program& program() = 0;
  // The result of a run of program() on machine() (records kept: RunOptions::record), or of a run in
  // which it shared the fabric, seen from its own chips (workloads/jobs/jobs_run.hpp).
  virtual nlohmann::ordered_json result(const SimResult& run) = 0;
};

struct WorkloadKind {
  std::string name, description;
  std::string subcommand;  // the command that runs it from flags ("run", "moe"), or ""
  // The result fields a workload sweep's CSV shows; the first, a time in seconds, its summary too.
  std::vector<std::string> columns;
  std::vector<std::string> formats;  // of standard output; the first is the default
  // Checks a workload object (whose "workload" field names this kind) without simulating; throws
  // InputError naming the file and the field.
  std::function<void(const nlohmann::json& workload, const std::string& file)> check;
  // Runs it, printing the result in output.format; returns the exit status (0, or 3 if it did not
  // verify). Throws InputError / SimulationError as `ultrasim run` does.
  std::function<int(const nlohmann::json& workload, const std::string& file, const WorkloadOutput& output)>
      run;
  // The result as a short table for people (the format "table").
  std::string (*table)(const nlohmann::ordered_json& result) = nullptr;
  // Prepares it to run as a job of a "jobs" file; null for kinds that cannot (the error says so). Throws
  // InputError as `check` does.
  std::function<std::unique_ptr<PreparedWorkload>(const nlohmann::json& workload, const std::string& file,
                                                  const std::string& command)>
      prepare = {};
};

const std::vector<WorkloadKind>& workload_kinds();

// Simulates a prepared workload (records kept) and returns its result; with `trace_path`, also writes the
// run's Perfetto trace there (opened first, so a bad path fails before the run).
nlohmann::ordered_json run_prepared(PreparedWorkload& prepared, RunOptions options,
                                    const std::string& trace_path);

// Exit status 3 for a result that did not verify, with the one stderr line every failing run leaves
// ("ultrasim: error: verification failed: FIRST_ERROR"; the result on stdout says it too).
int unverified(const std::string& first_error);

// Prints a result that carries "verified" as JSON (format "json") or as `table` makes it, after checking
// its times (check_simulated_time); returns the exit status it earns (0, or unverified()).
int print_workload_result(const nlohmann::ordered_json& result, const std::string& format,
                          std::string (*table)(const nlohmann::ordered_json&));

// The kind a workload object names in its "workload" field; throws InputError ("workload file 'F': unknown
// workload 'x'; did you mean ...") when the field is missing, not a string or names no kind.
const WorkloadKind& workload_kind_of(const nlohmann::json& workload, const std::string& file);

}  // namespace ultrasim
