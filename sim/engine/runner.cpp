#include "sim/engine/runner.hpp"

#include <cstring>

#include <sys/wait.h>
#include <unistd.h>

#include <utility>

#include "sim/engine/uncontended.hpp"
#include "sim/flow/flow_engine.hpp"
#include "sim/simgrid/simgrid_engine.hpp"
#include "topology/base/errors.hpp"
#include "workloads/collective_program.hpp"
#include "workloads/memory_guard.hpp"

namespace ultrasim {

namespace {
constexpr std::pair<Engine, const char*> kEngineNames[] = {{Engine::kAuto, "auto"},
                                                           {Engine::kSimGrid, "simgrid"},
                                                           {Engine::kContentionFree, "contention-free"},
                                                           {Engine::kFlow, "flow"}};
}

Engine parse_engine(const std::string& name) {
  for (const auto& [engine, text] : kEngineNames)
    if (name == text) return engine;
  throw InputError("unknown engine '" + name + "'; expected auto, simgrid, contention-free or flow");
}

const char* engine_name(Engine engine) {
  for (const auto& [e, text] : kEngineNames)
    if (e == engine) return text;
  return "?";
}

namespace {

// The machine was checked for memory with its flows in the flow engine (build_machine); SimGrid holds a
// flow in about 2.7 times as much, so a run it is to carry is checked again, before it starts.
SimResult run_on_simgrid(const Machine& machine, Program& program, const RunOptions& options) {
  check_memory(run_memory(*machine.topology, machine.in_flight_per_chip, kSimGridFlowCost),
               "this run on " + machine.topology->spec() + " in SimGrid");
  return simulate_simgrid(machine, program, options);
}

// The flow engine's run; nullopt when it declines and `auto` is to hand the run on to SimGrid.
std::optional<SimResult> run_on_flow(const Machine& machine, Program& program, const RunOptions& options) {
  FlowOutcome outcome = simulate_flow(machine, program, options.record);
  if (outcome.result) return std::move(outcome.result);
  if (outcome.failed) throw SimulationError(outcome.declined);
  if (options.engine == Engine::kFlow)
    throw SimulationError("the flow engine cannot run this: " + outcome.declined +
                          "; use --engine simgrid or auto");
  return std::nullopt;
}

}  // namespace

// auto: the contention-free engine, which proves its run had no contention; if it did, the flow engine;
// what that does not model yet (in-switch reduction), SimGrid. A program starts afresh on each.
SimResult simulate(const Machine& machine, Program& program, const RunOptions& options) {
  if (machine.faults.fails_links())
    if (std::string refusal = program.link_fault_refusal(); !refusal.empty()) throw InputError(refusal);
  // A platform file, SimGrid settings and link faults are SimGrid's to interpret.
  const bool simgrid_input = !options.platform_file.empty() || !options.simgrid_config.empty();
  const bool simgrid_only = simgrid_input || machine.faults.touches_links();
  if (options.engine == Engine::kContentionFree && simgrid_input)
    throw InputError(
        "--engine contention-free cannot use --platform or --simgrid-cfg (SimGrid's); use auto or simgrid");
  if (options.engine == Engine::kContentionFree && simgrid_only)
    throw InputError(
        "--engine contention-free cannot model link faults (link-down, switch-down, degrade); use auto or "
        "simgrid");
  if (options.engine == Engine::kFlow && simgrid_only)
    throw InputError(
        "--engine flow cannot use --platform or --simgrid-cfg (SimGrid's) or model link faults (link-down, "
        "switch-down, degrade) yet; use auto or simgrid");
  if (options.engine == Engine::kSimGrid || simgrid_only) return run_on_simgrid(machine, program, options);
  if (options.engine != Engine::kFlow) {
    UncontendedOutcome outcome = simulate_uncontended(machine, program, options.record);
    if (outcome.result) return std::move(*outcome.result);
    if (options.engine == Engine::kContentionFree) {
      if (outcome.declined.failed) throw SimulationError(outcome.declined.reason);
      throw SimulationError("the contention-free engine cannot run this exactly: " + outcome.declined.reason +
                            "; use --engine simgrid or auto");
    }
    // auto: a failed run (a chip's error, a deadlock) is reported by SimGrid in its own words.
    if (outcome.declined.failed) return run_on_simgrid(machine, program, options);
  }
  if (std::optional<SimResult> result = run_on_flow(machine, program, options)) return std::move(*result);
  return run_on_simgrid(machine, program, options);
}

SimResult simulate(const PreparedJob& job, const RunOptions& options) {
  CollectiveProgram program(job);
  return simulate(job, program, options);
}

ChildRun ChildRun::start(const std::function<double()>& work) {
  return start_values([&] { return std::vector<double>{work()}; });
}

std::optional<double> ChildRun::finish() {
  const auto values = finish_values();
  if (!values || values->size() != 1) return std::nullopt;
  return values->front();
}

ChildRun ChildRun::start_values(const std::function<std::vector<double>()>& work) {
  ChildRun run;
  int fds[2];
  if (pipe(fds) != 0) return run;
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return run;
  }
  if (child == 0) {  // the child: the count and the values in the pipe, then out without unwinding
    close(fds[0]);
    int status = 1;
    try {
      const std::vector<double> values = work();
      std::vector<double> message{static_cast<double>(values.size())};
      message.insert(message.end(), values.begin(), values.end());
      const auto* bytes = reinterpret_cast<const char*>(message.data());
      std::size_t left = message.size() * sizeof(double);
      while (left > 0) {
        const ssize_t n = write(fds[1], bytes, left);
        if (n <= 0) break;
        bytes += n, left -= static_cast<std::size_t>(n);
      }
      status = left == 0 && values.size() <= 4096 ? 0 : 1;
    } catch (...) {
    }
    _exit(status);
  }
  close(fds[1]);
  run.pid_ = child;
  run.fd_ = fds[0];
  return run;
}

std::optional<std::vector<double>> ChildRun::finish_values() {
  if (pid_ < 0) return std::nullopt;
  std::vector<char> got;
  char buffer[4096];
  for (ssize_t n; (n = read(fd_, buffer, sizeof buffer)) > 0 && got.size() < 8 * 4097;)
    got.insert(got.end(), buffer, buffer + n);
  close(fd_);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = fd_ = -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got.size() < sizeof(double) ||
      got.size() % sizeof(double) != 0)
    return std::nullopt;
  std::vector<double> values(got.size() / sizeof(double));
  std::memcpy(values.data(), got.data(), got.size());
  if (values.front() != static_cast<double>(values.size() - 1)) return std::nullopt;
  values.erase(values.begin());
  return values;
}

std::optional<double> fault_free_time(Machine& machine, Program& program, const RunOptions& options) {
  return ChildRun::start([&] {
           machine.faults = plan_faults({}, *machine.topology);
           RunOptions quiet = options;
           quiet.record = false;
           return simulate(machine, program, quiet).time_s;
         })
      .finish();
}

std::optional<double> fault_free_time(PreparedJob& job, const RunOptions& options) {
  CollectiveProgram program(job);
  return fault_free_time(job, program, options);
}

}  // namespace ultrasim
