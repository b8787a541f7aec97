// A sweep: a grid of points, each run in its own process (SimGrid keeps one simulation per process),
// results as JSON Lines written as points finish, resumable, shardable. Two kinds of grid:
// - collectives: the cross product of topologies x collectives x algorithms x sizes x parameter values x
//   seeds, each point one `ultrasim run`;
// - workloads (a sweep file with "workload"): a base workload object crossed with values of its fields
//   and with variant cases, each point one `ultrasim workload` of any kind (MoE, training, collective).
// The row format: workloads/README.md "ultrasim sweep".
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ultrasim {

struct SweepSpec {
  std::vector<std::string> topologies, collectives;
  std::vector<std::string> algorithms;  // names, "all" (every one of the collective) or "auto"
  std::vector<std::uint64_t> sizes;
  std::vector<std::pair<std::string, std::vector<std::string>>> sets;  // name -> values, in given order
  std::vector<std::uint64_t> seeds{0};
  std::vector<std::string> faults;  // --fault specs every point runs with (not crossed)
  // A workload sweep: the kind's name (empty: a collective sweep, the fields above). Each point is `base`
  // merged (JSON merge patch, RFC 7386: null removes a field) with one of `cases` (outermost; none: the
  // base alone) and then with one value of every `grid` axis (the first axis varies slowest).
  std::string workload;
  nlohmann::ordered_json base;  // ordered: points keep the fields in the order the files give them
  std::vector<std::pair<std::string, std::vector<nlohmann::ordered_json>>> grid;
  std::vector<nlohmann::ordered_json> cases;
};

// One point of the grid: the inputs of one `ultrasim run`.
struct SweepPoint {
  int id = 0;
  std::string topology, collective, algorithm;
  std::uint64_t bytes = 0, seed = 0;
  std::vector<std::pair<std::string, std::string>> sets;  // only those that apply to this point
  // A workload point: its kind, the workload object it runs, and what the grid and the case changed.
  std::string workload;
  nlohmann::ordered_json spec, patch;
  // "run --topology ... --format json"; a workload point: "workload - --format json", with `spec` on
  // its standard input.
  std::vector<std::string> run_args() const;
  nlohmann::ordered_json inputs() const;  // the row's input fields
};

// The most sizes, seeds or values of one parameter a sweep takes (a typo such as "1:1GiB:+1" would
// otherwise make a billion points).
constexpr std::size_t kMaxSweepValues = 100000;

// Checks a workload object without running it (workloads/registry.hpp: the kind's check); throws InputError.
using WorkloadCheck = std::function<void(const nlohmann::json& workload, const std::string& file)>;

// "1KiB:4GiB:x2" (geometric), "0:1MiB:+64KiB" (arithmetic) or "1KiB,1MiB" (a list); throws InputError.
std::vector<std::uint64_t> parse_sizes(const std::string& text);
// "0,1,2" or "0:3" (0, 1, 2); throws InputError.
std::vector<std::uint64_t> parse_seeds(const std::string& text);
// The spec of a JSON sweep file ({"topologies": [...], "collectives": [...], "algorithms": [...],
// "sizes": "1KiB:1GiB:x2" or [...], "sets": {"name": ["v1", "v2"]}, "seeds": [...]}, or a workload sweep
// {"workload": "moe", "base": {...} or "path/to/workload.json", "grid": {"field": [values]},
// "cases": [{...}]}); throws InputError.
SweepSpec read_sweep_file(const std::string& path);

// Expands the grid in the order topology, collective, algorithm, size, parameter values, seed. A --set
// applies to a point whose topology, model or algorithm declares the name; a name no point declares is an
// InputError, as are unknown topologies, collectives and algorithms (checked before anything runs).
std::vector<SweepPoint> expand(const SweepSpec& spec);
// A workload sweep's points (spec.workload set), each checked with `check` before anything runs; an
// error names the point and what its grid values and case changed.
std::vector<SweepPoint> expand_workloads(const SweepSpec& spec, const WorkloadCheck& check);

// The row of a finished point from the run's exit status, standard output and standard error.
nlohmann::ordered_json sweep_row(const SweepPoint& point, int exit_status, const std::string& out,
                                 const std::string& err);

// Rows of an earlier (possibly killed) sweep in `path`, by point id; a torn last line is dropped. Throws
// InputError when a row's inputs differ from the grid's point of the same id (another sweep's file).
std::map<int, nlohmann::ordered_json> read_finished(const std::string& path,
                                                    const std::vector<SweepPoint>& grid);

struct SweepOptions {
  int jobs = 1;
  std::optional<std::pair<int, int>> shard;  // (K, N): points with id mod N == K
  std::string out;                           // empty: rows to standard output at the end
  std::string format = "jsonl";              // jsonl | csv
  bool resume = false;
  std::string timing;                  // a file for per-point wall times (kept out of the results)
  std::string binary;                  // the ultrasim program that runs each point
  std::vector<std::string> run_extra;  // arguments added to every point's run, e.g. {"--engine", "simgrid"}
  std::vector<std::string> columns;    // a workload sweep's result columns (WorkloadKind::columns)
};
// Runs the sweep; returns the rows of every point of this shard, sorted by id. Prints progress on stderr
// when it is a terminal.
std::vector<nlohmann::ordered_json> run_sweep(const std::vector<SweepPoint>& grid,
                                              const SweepOptions& options);

// The summary: per topology, collective and machine sets, the best verified algorithm per size and its
// runner-up, ranked as `ultrasim tune` ranks them (rank_sweep_rows: an algorithm parameter swept with --set
// competes inside its group); for workload rows, each point's first `columns` field (a time in seconds).
std::string sweep_summary(const std::vector<nlohmann::ordered_json>& rows,
                          const std::vector<std::string>& columns = {});
// A row as one JSON line (with its newline); bytes that are not UTF-8 become U+FFFD.
std::string sweep_json_line(const nlohmann::ordered_json& row);
// A row as CSV (fixed columns; csv_header() names them). A workload sweep's columns: point, status,
// workload, inputs (the JSON of what the point changed), the kind's result `columns`, error.
std::string sweep_csv_header(const std::vector<std::string>& columns = {});
std::string sweep_csv_line(const nlohmann::ordered_json& row, const std::vector<std::string>& columns = {});

}  // namespace ultrasim
