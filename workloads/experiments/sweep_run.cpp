// Running a sweep's points: one child process each, --jobs at a time, rows appended as they finish, --resume,
// Ctrl-C.
#include "workloads/experiments/sweep.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>

#include "collectives/algorithm.hpp"
#include "collectives/schedule.hpp"
#include "sim/machine/faults.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/progress.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "topology/registry.hpp"
#include "workloads/collective/collective_job.hpp"
#include "workloads/experiments/tune.hpp"

extern char** environ;

namespace ultrasim {
nlohmann::ordered_json sweep_row(const SweepPoint& point, int exit_status, const std::string& out,
                                 const std::string& err) {
  nlohmann::ordered_json row{{"point", point.id}, {"status", exit_status == 0 ? "ok" : "error"}};
  const nlohmann::ordered_json inputs = point.inputs();
  for (const auto& [key, value] : inputs.items()) row[key] = value;
  nlohmann::ordered_json result;
  try {
    result = nlohmann::ordered_json::parse(out);
  } catch (const std::exception&) {
  }
  if (result.is_object())
    for (const auto& [key, value] : result.items())
      if (!row.contains(key)) row[key] = value;
  if (exit_status != 0) {
    std::string message = err.substr(0, err.find('\n'));
    const std::string prefix = "ultrasim: error: ";
    if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
    if (message.empty())
      message = exit_status == 3 ? "verification failed" : "exit status " + std::to_string(exit_status);
    // A refused point names the algorithm it asked for, so that rows of one size differ.
    if (!row.contains("algorithm") && row.contains("requested_algorithm"))
      row["algorithm"] = row["requested_algorithm"];
    row["error"] = message;
    row["exit_status"] = exit_status;
  }
  return row;
}

std::map<int, nlohmann::ordered_json> read_finished(const std::string& path,
                                                    const std::vector<SweepPoint>& grid) {
  std::map<int, nlohmann::ordered_json> rows;
  std::ifstream in(path);
  int torn = 0;  // the line torn by a killed sweep, if any: it must be the last
  auto not_ours = [&](int line) {
    return InputError("--resume: '" + path + "' line " + std::to_string(line) +
                      " is not a row of an ultrasim sweep (another program's file?); it was left as it was");
  };
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (torn > 0) throw not_ours(torn);  // a line that is not JSON, with rows after it
    nlohmann::ordered_json row;
    try {
      row = parse_ordered_json_input(line, path);
    } catch (const std::exception&) {
      if (!line.starts_with("{\"point\":")) throw not_ours(number);
      torn = number;  // a killed sweep's last line: that point runs again
      continue;
    }
    if (!row.is_object() || !row.contains("point") || !row.contains("status")) throw not_ours(number);
    if (!row["point"].is_number_integer())
      throw InputError("--resume: '" + path + "' has a row whose \"point\" is " + row["point"].dump() +
                       ", not a point number (another program's file?)");
    const std::int64_t id = row["point"].get<std::int64_t>();
    if (id < 0 || id >= static_cast<std::int64_t>(grid.size()))
      throw InputError("--resume: '" + path + "' has point " + std::to_string(id) + ", outside this sweep");
    const nlohmann::ordered_json inputs = grid[id].inputs();
    for (const auto& [key, value] : inputs.items())
      if (row[key] != value)
        throw InputError("--resume: '" + path + "' point " + std::to_string(id) + " has " + key + " " +
                         json_text(row[key]) + ", this sweep " + json_text(value) +
                         " (another sweep's file?)");
    rows[static_cast<int>(id)] = row;
  }
  return rows;
}

namespace {

struct Child {
  pid_t pid = -1;
  int point = 0;
  std::string out, err;
  std::chrono::steady_clock::time_point start;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Child spawn(const SweepOptions& options, const SweepPoint& point, const std::string& dir) {
  const std::string& binary = options.binary;
  Child child;
  child.point = point.id;
  child.out = dir + "/" + std::to_string(point.id) + ".out";
  child.err = dir + "/" + std::to_string(point.id) + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, child.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, child.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!point.workload.empty()) {  // the point's workload object, on the standard input of `workload -`
    const std::string spec_file = dir + "/" + std::to_string(point.id) + ".json";
    std::ofstream(spec_file) << json_text(point.spec);
    posix_spawn_file_actions_addopen(&actions, 0, spec_file.c_str(), O_RDONLY, 0);
  }
  std::vector<std::string> args = point.run_args();
  args.insert(args.end(), options.run_extra.begin(), options.run_extra.end());
  args.insert(args.begin(), binary);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  child.start = std::chrono::steady_clock::now();
  if (posix_spawn(&child.pid, binary.c_str(), &actions, nullptr, argv.data(), environ) != 0)
    throw std::runtime_error("cannot start " + binary);
  posix_spawn_file_actions_destroy(&actions);
  return child;
}

// The whole text of a rows file.
std::string rows_text(const std::string& format, const std::vector<std::string>& columns,
                      const std::vector<nlohmann::ordered_json>& rows) {
  std::string text = format == "csv" ? sweep_csv_header(columns) : "";
  for (const auto& row : rows) text += format == "csv" ? sweep_csv_line(row, columns) : sweep_json_line(row);
  return text;
}

}  // namespace

namespace {

// Where rows go as points finish: the --out file (written in place and appended to, row by row, so a
// killed sweep keeps what finished and --resume reads it back; locked against a second sweep for the
// whole run: topology/base/output_file.hpp) and the --timing file (appended to, unlocked). Opened before
// --out is read back or emptied, so a second sweep is refused before it touches the file.
struct SweepSinks {
  std::unique_ptr<AppendedFile> out, timing;
};

SweepSinks open_sweep_sinks(const SweepOptions& options) {
  SweepSinks sinks;
  if (!options.out.empty()) sinks.out = std::make_unique<AppendedFile>(options.out, "--out file", true);
  if (!options.timing.empty())
    sinks.timing = std::make_unique<AppendedFile>(options.timing, "--timing file", false);
  return sinks;
}

// Ctrl-C (SIGINT) or SIGTERM (Slurm's, kill's) while points run: the sweep stops starting points, stops
// those running (with the same signal), keeps every row that finished and says so (Interrupted); callers
// above it (the planner) clean up as they unwind.
volatile std::sig_atomic_t g_interrupted = 0;  // the signal, 0 if none
extern "C" void on_interrupt(int signal) {
  g_interrupted = signal;
}

class InterruptWatch {
 public:
  InterruptWatch() {
    g_interrupted = 0;
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_int_);  // no SA_RESTART: waitpid returns at once
    sigaction(SIGTERM, &action, &previous_term_);
  }
  ~InterruptWatch() {
    sigaction(SIGINT, &previous_int_, nullptr);
    sigaction(SIGTERM, &previous_term_, nullptr);
  }
  int signal() const { return g_interrupted; }

 private:
  struct sigaction previous_int_ {
  }, previous_term_{};
};

// Runs `pending` as child processes, options.jobs at a time, in `dir`; `finish(child, exit status)` is
// called as each ends, in the order they end. Once it returns false, or Ctrl-C is pressed, no more points
// start (those running are stopped and waited for, and finish is not called for them). Returns the signal
// that stopped it (SIGINT, SIGTERM), 0 if none did.
int run_point_processes(const std::vector<const SweepPoint*>& pending, const SweepOptions& options,
                        const std::string& dir, const std::function<bool(const Child&, int)>& finish) {
  const InterruptWatch watch;
  std::map<pid_t, Child> running;
  std::size_t next = 0;
  bool going = true;
  int stopped = 0;
  while ((going && next < pending.size()) || !running.empty()) {
    while (going && next < pending.size() && static_cast<int>(running.size()) < std::max(1, options.jobs)) {
      Child child = spawn(options, *pending[next++], dir);
      running[child.pid] = child;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (watch.signal() != 0 && stopped == 0) {
      going = false, stopped = watch.signal();
      for (const auto& [running_pid, child] : running) kill(running_pid, stopped);
    }
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    Child child = it->second;
    running.erase(it);
    if (going) going = finish(child, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return stopped;
}

// What an interrupted sweep kept, and how to go on.
std::string interrupted_message(const SweepOptions& options, std::size_t finished, std::size_t total) {
  std::string text =
      "interrupted: " + std::to_string(finished) + " of " + std::to_string(total) + " points finished";
  if (options.out.empty()) return text + "; without --out no file keeps their rows";
  text += ", their rows kept in " + options.out;
  return text + (options.format == "jsonl"
                     ? "; the same command with --resume runs the other " + std::to_string(total - finished)
                     : "; --resume continues a sweep written with --format jsonl");
}

// This shard's points, and with --resume the rows an earlier run of the same sweep finished (its file
// rewritten without a torn last line).
std::vector<const SweepPoint*> shard_points(const std::vector<SweepPoint>& grid,
                                            const SweepOptions& options) {
  std::vector<const SweepPoint*> todo;
  for (const auto& point : grid)
    if (!options.shard || point.id % options.shard->second == options.shard->first) todo.push_back(&point);
  return todo;
}

std::map<int, nlohmann::ordered_json> resumed_rows(const std::vector<SweepPoint>& grid,
                                                   const SweepOptions& options, AppendedFile& out) {
  std::map<int, nlohmann::ordered_json> done = read_finished(options.out, grid);
  std::vector<nlohmann::ordered_json> kept;
  for (auto& [id, row] : done) kept.push_back(row);
  out.replace(rows_text(options.format, options.columns, kept));  // drops a torn last line
  return done;
}

}  // namespace

std::vector<nlohmann::ordered_json> run_sweep(const std::vector<SweepPoint>& grid,
                                              const SweepOptions& options) {
  const std::vector<const SweepPoint*> todo = shard_points(grid, options);
  if (options.resume && (options.out.empty() || options.format != "jsonl"))
    throw InputError("--resume needs --out FILE in the jsonl format");
  SweepSinks sinks = open_sweep_sinks(options);
  std::map<int, nlohmann::ordered_json> done;
  if (options.resume) {
    done = resumed_rows(grid, options, *sinks.out);
  } else if (sinks.out) {
    sinks.out->truncate();
    if (options.format == "csv") sinks.out->append(sweep_csv_header(options.columns));
  }
  std::string dir =
      (std::filesystem::path(temp_directory()) / ("ultrasim-sweep-" + std::to_string(getpid()))).string();
  std::filesystem::create_directories(dir);

  std::vector<const SweepPoint*> pending;
  for (const SweepPoint* p : todo)
    if (!done.count(p->id)) pending.push_back(p);
  std::exception_ptr write_failure;
  int interrupted = 0;
  {
    Progress progress("sweep", todo.size(), todo.size() - pending.size());
    interrupted =
        run_point_processes(pending, options, dir, [&](const Child& child, int exit_status) -> bool {
          nlohmann::ordered_json row =
              sweep_row(grid[child.point], exit_status, slurp(child.out), slurp(child.err));
          std::filesystem::remove(child.out), std::filesystem::remove(child.err);
          std::filesystem::remove(dir + "/" + std::to_string(child.point) + ".json");
          double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - child.start).count();
          try {  // a failed write (a full disk) stops the sweep: no more points start, and it fails
            if (sinks.out)
              sinks.out->append(options.format == "csv" ? sweep_csv_line(row, options.columns)
                                                        : sweep_json_line(row));
            if (sinks.timing)
              sinks.timing->append(nlohmann::ordered_json{{"point", child.point}, {"wall_s", wall}}.dump() +
                                   "\n");
          } catch (...) {
            write_failure = std::current_exception();
            return false;
          }
          done[child.point] = row;
          progress.advance();
          return true;
        });
  }
  std::filesystem::remove_all(dir);
  if (write_failure) std::rethrow_exception(write_failure);
  std::vector<nlohmann::ordered_json> rows;
  for (const SweepPoint* p : todo)
    if (done.count(p->id)) rows.push_back(done[p->id]);
  if (sinks.out) sinks.out->replace(rows_text(options.format, options.columns, rows));  // sorted by point
  if (interrupted) throw Interrupted(interrupted_message(options, rows.size(), todo.size()), interrupted);
  return rows;
}

}  // namespace ultrasim
