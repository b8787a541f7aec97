#include "sim/engines/runner.hpp"

#include <cmath>
#include <cstring>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <thread>
#include <utility>

#include "sim/engines/engines.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/log.hpp"

namespace ultrasim {

namespace {

// An engine's run: its result; nullopt when it declines and `auto` is to hand the run on; a
// SimulationError when the run failed, or when the engine was asked for by name and declines.
std::optional<SimResult> run_on(Engine engine, const Machine& machine, Program& program,
                                const RunOptions& options) {
  const EngineEntry& entry = engine_entry(engine);
  logger().debug("running on the {} engine ({} chips)", entry.name, machine.p());
  EngineOutcome outcome = entry.run(machine, program, options);
  if (outcome.result) {
    logger().debug("the {} engine: {} transfers, {} s simulated", entry.name, outcome.result->transfers,
                   outcome.result->time_s);
    return std::move(outcome.result);
  }
  if (!outcome.failed) logger().info("the {} engine declined: {}", entry.name, outcome.declined);
  if (outcome.failed) throw SimulationError(outcome.declined);
  if (options.engine == engine)
    throw SimulationError("the " + entry.name + " engine cannot run this" +
                          (engine == Engine::kContentionFree ? " exactly" : "") + ": " + outcome.declined +
                          "; use --engine simgrid or auto");
  return std::nullopt;
}

}  // namespace

// auto, the one engine policy: the contention-free engine, which proves its run had no contention; if it
// did, the engine options.contended names (flow or fast); what that does not model (in-switch reduction),
// SimGrid, unless options.simgrid_fallback is off. A program starts afresh on each.
SimResult simulate(const Machine& machine, Program& program, const RunOptions& options) {
  if (machine.faults.fails_links())
    if (std::string refusal = program.link_fault_refusal(); !refusal.empty()) throw InputError(refusal);
  // A platform file, SimGrid settings and link faults are SimGrid's to interpret.
  const bool simgrid_input = !options.platform_file.empty() || !options.simgrid_config.empty();
  const bool simgrid_only = simgrid_input || machine.faults.touches_links();
  const Engine asked = options.engine;
  if (asked != Engine::kAuto && asked != Engine::kSimGrid && simgrid_only) {
    const std::string flag = "--engine " + engine_entry(asked).name;
    if (asked == Engine::kContentionFree && !simgrid_input)
      throw InputError(flag +
                       " cannot model link faults (link-down, switch-down, degrade); use auto or simgrid");
    if (asked == Engine::kContentionFree)
      throw InputError(flag + " cannot use --platform or --simgrid-cfg (SimGrid's); use auto or simgrid");
    throw InputError(flag +
                     " cannot use --platform or --simgrid-cfg (SimGrid's) or model link faults (link-down, "
                     "switch-down, degrade) yet; use auto or simgrid");
  }
  if (asked == Engine::kMatrix && program.matrix_form().empty())
    throw InputError("--engine matrix cannot run this: " + program.matrix_refusal() +
                     "; use auto, flow or fast");
  if (asked == Engine::kSimGrid || simgrid_only) return *run_on(Engine::kSimGrid, machine, program, options);
  if (asked != Engine::kAuto) return *run_on(asked, machine, program, options);
  logger().debug("auto: trying the contention-free engine ({} chips)", machine.p());
  EngineOutcome outcome = run_contention_free(machine, program, options);
  if (outcome.result) {
    logger().debug("the contention-free engine: {} transfers, {} s simulated", outcome.result->transfers,
                   outcome.result->time_s);
    return std::move(*outcome.result);
  }
  if (!outcome.failed) logger().info("auto: the contention-free engine declined: {}", outcome.declined);
  // A failed run (a chip's error, a deadlock) is reported by SimGrid in its own words.
  // Where thousands of exchanges are simulated, a chain of all-to-allv exchanges (an MoE layer) is
  // priced from its traffic matrices.
  const Engine contended =
      options.contended == Engine::kFast ? approximate_engine(program) : options.contended;
  if (!outcome.failed || !options.simgrid_fallback)
    if (auto result = run_on(contended, machine, program, options)) return std::move(*result);
  if (!options.simgrid_fallback)
    throw SimulationError("the " + engine_entry(contended).name +
                          " engine cannot run this, and SimGrid runs once per process");
  return *run_on(Engine::kSimGrid, machine, program, options);
}

Engine approximate_engine(const Program& program) {
  return program.matrix_form().empty() ? Engine::kFast : Engine::kMatrix;
}

void EngineCheck::add(const std::string& what, const Machine& machine, Program& program) {
  RunOptions options;
  if (machine.faults.touches_links() || !run_contention_free(machine, program, options).result) ++contended;
  options.engine = Engine::kFlow;
  const double exact_s = simulate(machine, program, options).time_s;
  options.engine = approximate_engine(program);
  engine = exchanges == 0 ? options.engine : least_exact(engine, options.engine);
  const double fast_s = simulate(machine, program, options).time_s;
  ++exchanges;
  const double diff = exact_s > 0 ? std::abs(fast_s - exact_s) / exact_s : std::abs(fast_s - exact_s);
  if (exchanges == 1 || diff > max_rel_diff)
    max_rel_diff = diff, worst = what, worst_fast_s = fast_s, worst_exact_s = exact_s;
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

std::size_t child_jobs() {
  return std::max(1u, std::thread::hardware_concurrency());
}

std::vector<std::vector<double>> run_in_children(
    std::size_t n, const std::function<std::vector<double>(std::size_t)>& work,
    const std::function<void(std::size_t)>& failed,
    const std::function<bool(const std::vector<double>&)>& accept, std::size_t jobs) {
  if (jobs == 0) jobs = child_jobs();
  std::vector<std::vector<double>> values;
  std::deque<std::pair<std::size_t, ChildRun>> running;
  auto collect = [&] {
    auto [i, child] = running.front();
    running.pop_front();
    auto got = child.finish_values();
    if (!got || (accept && !accept(*got))) {
      for (auto& other : running) other.second.finish_values();
      running.clear();
      failed(i);
      throw SimulationError("a child process failed");
    }
    values.push_back(std::move(*got));
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (running.size() >= jobs) collect();
    running.emplace_back(i, ChildRun::start_values([&work, i] { return work(i); }));
  }
  while (!running.empty()) collect();
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

}  // namespace ultrasim
