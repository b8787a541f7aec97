// `ultrasim sweep`: a grid of collective points (flags or a sweep file) or of workload points (a sweep
// file with "workload"), each in its own process (workloads/experiments/sweep.hpp), rows as JSON Lines or
// CSV.
#include <algorithm>
#include <iostream>
#include <thread>

#include "sim/app/commands/command.hpp"
#include "sim/engines/engines.hpp"
#include "sim/engines/records.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "workloads/experiments/sweep.hpp"
#include "workloads/registry.hpp"

namespace ultrasim {
namespace {

struct SweepArgs {
  std::string topologies, collectives, algorithms = "all", sizes, seeds = "0", file, out, format = "jsonl";
  std::string shard, timing, engine = "auto";
  std::vector<std::string> sets, faults;
  std::string jobs;  // empty: one per core
  bool resume = false;
};

}  // namespace

// --jobs: at most 4 per core (each point is a process of 100 MiB or more: far more of them than cores
// only thrashes the machine), default one per core.
int parse_jobs(const std::string& text) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (text.empty()) return cores;
  const int most = std::max(16, 4 * cores);
  int jobs = 0;
  try {
    jobs = static_cast<int>(with_context("--jobs", [&] { return parse_count(text); }));
  } catch (const InputError&) {
    throw InputError("invalid --jobs '" + text + "'; expected a whole number from 1 to " +
                     std::to_string(most));
  }
  if (jobs > most)
    throw InputError("--jobs " + text + " is more than 4 x the " + std::to_string(cores) +
                     " cores (at most " + std::to_string(most) + ")");
  return jobs;
}

// --shard K/N with 0 <= K < N.
std::pair<int, int> parse_shard(const std::string& text) {
  auto slash = text.find('/');
  long k = -1, n = 0;
  auto number = [](const std::string& part) {
    return part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos
               ? -1L
               : std::stol(part);
  };
  if (slash != std::string::npos) k = number(text.substr(0, slash)), n = number(text.substr(slash + 1));
  if (slash == std::string::npos || n < 1 || k < 0 || k >= n)
    throw InputError("invalid --shard '" + text + "'; expected K/N with 0 <= K < N, e.g. 0/4");
  return {static_cast<int>(k), static_cast<int>(n)};
}

namespace {

// The grid: a collective sweep's from the file and the flags (flags override the file's keys), or a
// workload sweep's from its file alone. Sets options.columns for a workload sweep.
std::vector<SweepPoint> sweep_grid(const SweepArgs& args, SweepOptions& options) {
  SweepSpec spec;
  if (!args.file.empty()) spec = read_sweep_file(args.file);
  auto list = [](const std::string& text) { return split_items(text, ','); };
  if (!spec.workload.empty()) {
    if (!args.topologies.empty() || !args.collectives.empty() || args.algorithms != "all" ||
        !args.sizes.empty() || args.seeds != "0" || !args.sets.empty() || !args.faults.empty() ||
        args.engine != "auto")
      throw InputError(
          "a workload sweep takes its points from its file (grid, cases); --topology, "
          "--collective, --algorithm, --sizes, --set, --seeds, --fault and --engine are for "
          "collective sweeps");
    const WorkloadKind& kind = find_by_name(workload_kinds(), spec.workload, "workload");
    options.columns = kind.columns;
    return expand_workloads(spec, kind.check);
  }
  if (!args.topologies.empty()) spec.topologies = list(args.topologies);
  if (!args.collectives.empty()) spec.collectives = list(args.collectives);
  if (args.file.empty() || args.algorithms != "all") spec.algorithms = list(args.algorithms);
  if (!args.sizes.empty()) spec.sizes = parse_sizes(args.sizes);
  if (args.file.empty() || args.seeds != "0") spec.seeds = parse_seeds(args.seeds);
  for (const auto& set : args.sets) {
    auto [name, values] = split_assignment(set);
    spec.sets.emplace_back(name, list(values));
  }
  if (parse_engine(args.engine) != Engine::kAuto) options.run_extra = {"--engine", args.engine};
  if (!args.faults.empty()) spec.faults = args.faults;
  for (const auto& fault : spec.faults) options.run_extra.insert(options.run_extra.end(), {"--fault", fault});
  return expand(spec);
}

int sweep(const SweepArgs& args) {
  check_choice("format", args.format, {"jsonl", "csv"});
  SweepOptions options;
  options.jobs = parse_jobs(args.jobs);
  options.out = args.out, options.format = args.format, options.resume = args.resume;
  options.timing = args.timing, options.binary = "/proc/self/exe";
  if (!args.shard.empty()) options.shard = parse_shard(args.shard);
  const std::vector<SweepPoint> grid = sweep_grid(args, options);
  const auto rows = run_sweep(grid, options);
  const std::string summary = printable_text(sweep_summary(rows, options.columns), true);
  if (args.out.empty()) {
    if (args.format == "csv") std::cout << sweep_csv_header(options.columns);
    for (const auto& row : rows)
      std::cout << (args.format == "csv" ? sweep_csv_line(row, options.columns) : sweep_json_line(row));
    // Rows that did not reach the standard output fail the sweep, before its summary joins the error.
    if (const std::string lost = standard_output_error(); !lost.empty()) throw InputError(lost);
    std::cerr << summary;
  } else {
    std::cout << summary;
  }
  return 0;
}

}  // namespace

Command sweep_command() {
  return {
      "sweep", "run a grid of points, each in its own process, as JSON Lines", [](CLI::App& app) {
        auto args = std::make_shared<SweepArgs>();
        SweepArgs& a = *args;
        app.add_option("--topology", a.topologies, "topology specs, comma-separated");
        app.add_option("--collective", a.collectives, "collectives, comma-separated");
        app.add_option("--algorithm", a.algorithms, "algorithms, comma-separated, all or auto (default all)");
        app.add_option("--sizes", a.sizes, "FROM:TO:xFACTOR, FROM:TO:+STEP or a list, e.g. 1KiB:4GiB:x2");
        app.add_option("--set", a.sets, "parameter values, name=v1,v2 (repeatable; crossed)");
        add_stack_option(app, a.sets, "software stacks, comma-separated (as --set stack=v1,v2)");
        app.add_option("--engine", a.engine, "for every point: " + engine_help("each point's own"));
        app.add_option("--fault", a.faults, "a fault every point runs with (repeatable; as run --fault)");
        app.add_option("--seeds", a.seeds, "seeds, e.g. 0,1,2 or 0:3 (default 0)");
        app.add_option("--file", a.file,
                       "a JSON sweep file: collectives (flags given too override its keys) or a workload's "
                       "grid");
        app.add_option("--jobs", a.jobs, "points run at once (default: one per core)");
        app.add_option("--out", a.out, "write rows to FILE as they finish (sorted at the end)");
        app.add_option("--format", a.format, "jsonl|csv");
        app.add_flag("--resume", a.resume, "skip the points FILE already has");
        app.add_option("--shard", a.shard, "run the points with id mod N == K, as K/N");
        app.add_option("--timing", a.timing, "append per-point wall seconds to FILE");
        return [args](const std::string&) { return sweep(*args); };
      }};
}

}  // namespace ultrasim
