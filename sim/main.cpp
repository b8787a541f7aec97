// ultrasim: the command-line program. Parses the user's words, runs one command, and maps errors to
// exit statuses: 0 success, 2 bad input, 3 simulation failed or did not verify, 1 internal error.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <new>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "sim/collective_run.hpp"
#include "sim/explain.hpp"
#include "sim/link_stats.hpp"
#include "sim/moe_run.hpp"
#include "sim/output_file.hpp"
#include "sim/report.hpp"
#include "sim/runner.hpp"
#include "sim/trace.hpp"
#include "sim/training_run.hpp"
#include "sim/workloads.hpp"
#include "topology/errors.hpp"
#include "topology/export.hpp"
#include "topology/input_files.hpp"
#include "topology/suggest.hpp"
#include "topology/units.hpp"
#include "workloads/groups.hpp"
#include "workloads/memory_guard.hpp"
#include "workloads/sweep.hpp"
#include "workloads/training.hpp"
#include "workloads/tune.hpp"

namespace {

using namespace ultrasim;

// An error message as one printable line: control characters and bytes that are not UTF-8 (a file's
// junk, a path in another encoding) are escaped as \xNN, and a message quoting a huge value is cut.
std::string one_line(const std::string& text) {
  constexpr std::size_t kMaxBytes = 2000;
  std::string out;
  for (std::size_t i = 0; i < text.size() && out.size() < kMaxBytes;) {
    const auto byte = static_cast<unsigned char>(text[i]);
    // The length of the well-formed UTF-8 sequence starting here (1 for ASCII), or 0.
    std::size_t length = byte < 0x80           ? 1
                         : (byte >> 5) == 0x6  ? 2
                         : (byte >> 4) == 0xe  ? 3
                         : (byte >> 3) == 0x1e ? 4
                                               : 0;
    if (i + length > text.size()) length = 0;
    for (std::size_t k = 1; k < length; ++k)
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) length = 0;
    if (length == 0 || byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
      ++i;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  if (out.size() >= kMaxBytes) out += "...";
  return out;
}

int fail(int status, const std::string& message) {
  std::cerr << "ultrasim: error: " << one_line(message) << "\n";
  return status;
}

nlohmann::ordered_json params_json(const std::vector<ParamSpec>& specs) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& p : specs)
    out.push_back({{"name", p.name},
                   {"default", p.default_value},
                   {"unit", unit_name(p.unit)},
                   {"meaning", p.meaning},
                   {"source", p.source}});
  return out;
}

// The registries as JSON (--format json) or one line per entry; algorithms show their parameters
// with defaults, and "auto" is listed with them.
int cmd_list(const std::string& what, const std::string& format) {
  check_choice("list", what, {"all", "topologies", "collectives", "algorithms", "workloads"});
  check_choice("format", format, {"text", "json"});
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  if (what == "all" || what == "topologies") {
    auto& list = out["topologies"] = nlohmann::ordered_json::array();
    for (const auto& g : topology_generators())
      list.push_back({{"name", g.name},
                      {"syntax", g.syntax},
                      {"description", g.description},
                      {"example", g.example.empty() ? g.name : g.example},
                      {"parameters", params_json(g.params)}});
  }
  if (what == "all" || what == "collectives") {
    auto& list = out["collectives"] = nlohmann::ordered_json::array();
    for (const auto& c : collectives()) list.push_back({{"name", c.name}, {"description", c.description}});
  }
  if (what == "all" || what == "algorithms") {
    auto& list = out["algorithms"] = nlohmann::ordered_json::array();
    for (const auto& a : algorithms())
      list.push_back({{"collective", a.collective},
                      {"name", a.name},
                      {"description", a.description},
                      {"parameters", params_json(a.params)}});
    list.push_back({{"collective", "any"},
                    {"name", "auto"},
                    {"description", "the algorithm with the smallest model_s for the topology and size"},
                    {"parameters", nlohmann::ordered_json::array()}});
    list.push_back(
        {{"collective", "any"},
         {"name", "file:PATH"},
         {"description", "a JSON schedule, run and verified like a built-in (README: algorithms as data)"},
         {"parameters", nlohmann::ordered_json::array()}});
  }
  if (what == "all" || what == "workloads") {
    auto& list = out["workloads"] = nlohmann::ordered_json::array();
    for (const WorkloadKind& w : workload_kinds())
      list.push_back({{"name", w.name},
                      {"description", w.description},
                      {"command", w.subcommand.empty() ? "workload FILE" : w.subcommand + ", workload FILE"},
                      {"formats", w.formats}});
  }
  if (format == "json") {
    std::cout << json_text(out, 2) << "\n";
    return 0;
  }
  for (const auto& [section, items] : out.items()) {
    std::cout << section << ":\n";
    for (const auto& item : items) {
      std::string name =
          item.contains("syntax") ? item["syntax"].get<std::string>() : item["name"].get<std::string>();
      std::string description = item["description"].get<std::string>();
      if (item.contains("collective")) {
        name = item["collective"].get<std::string>() + " " + name;
        for (const auto& p : item["parameters"])
          description +=
              " [--set " + p["name"].get<std::string>() + "=" + p["default"].get<std::string>() + "]";
      }
      std::printf("  %-32s %s\n", name.c_str(), description.c_str());
    }
  }
  return 0;
}

int cmd_topology(const std::string& spec, const std::vector<std::string>& sets, const std::string& format,
                 const std::string& output) {
  check_choice("format", format, {"summary", "json", "dot", "simgrid-xml"});
  Topology topology = make_topology(spec, model_params(), split_assignments(sets));
  check_memory(topology_memory(topology), "describing " + spec);
  Routes routes(topology);
  std::string text;
  if (format == "summary") text = topology_summary(topology, routes);
  if (format == "json") text = json_text(topology_json(topology, routes), 2) + "\n";
  if (format == "dot") text = topology_dot(topology);
  if (format == "simgrid-xml") text = topology_simgrid_xml(topology, routes);
  if (output.empty()) {
    std::cout << text;
  } else {
    *open_output(output, "output") << text;
  }
  return 0;
}

struct SweepArgs {
  std::string topologies, collectives, algorithms = "all", sizes, seeds = "0", file, out, format = "jsonl";
  std::string shard, timing, engine = "auto";
  std::vector<std::string> sets, faults;
  std::string jobs;  // empty: one per core
  bool resume = false;
};

int cmd_sweep(const SweepArgs& args) {
  check_choice("format", args.format, {"jsonl", "csv"});
  SweepSpec spec;
  if (!args.file.empty()) spec = read_sweep_file(args.file);
  auto list = [](const std::string& text) { return split_items(text, ','); };
  if (!args.topologies.empty()) spec.topologies = list(args.topologies);
  if (!args.collectives.empty()) spec.collectives = list(args.collectives);
  if (args.file.empty() || args.algorithms != "all") spec.algorithms = list(args.algorithms);
  if (!args.sizes.empty()) spec.sizes = parse_sizes(args.sizes);
  if (args.file.empty() || args.seeds != "0") spec.seeds = parse_seeds(args.seeds);
  for (const auto& set : args.sets) {
    auto [name, values] = split_assignment(set);
    spec.sets.emplace_back(name, list(values));
  }
  SweepOptions options;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.jobs = cores;
  if (!args.jobs.empty()) {
    // Each point is a process of 100 MiB or more: far more of them than cores only thrashes the machine.
    const int most = std::max(16, 4 * cores);
    try {
      options.jobs = static_cast<int>(parse_count(args.jobs));
    } catch (const InputError&) {
      throw InputError("invalid --jobs '" + args.jobs + "'; expected a whole number from 1 to " +
                       std::to_string(most));
    }
    if (options.jobs > most)
      throw InputError("--jobs " + args.jobs + " is more than 4 x the " + std::to_string(cores) +
                       " cores (at most " + std::to_string(most) + ")");
  }
  options.out = args.out, options.format = args.format, options.resume = args.resume;
  options.timing = args.timing, options.binary = "/proc/self/exe";
  if (parse_engine(args.engine) != Engine::kAuto) options.run_extra = {"--engine", args.engine};
  if (!args.faults.empty()) spec.faults = args.faults;
  for (const auto& fault : spec.faults) options.run_extra.insert(options.run_extra.end(), {"--fault", fault});
  if (!args.shard.empty()) {
    auto slash = args.shard.find('/');
    long k = -1, n = 0;
    auto number = [](const std::string& text) {
      return text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos
                 ? -1L
                 : std::stol(text);
    };
    if (slash != std::string::npos)
      k = number(args.shard.substr(0, slash)), n = number(args.shard.substr(slash + 1));
    if (slash == std::string::npos || n < 1 || k < 0 || k >= n)
      throw InputError("invalid --shard '" + args.shard + "'; expected K/N with 0 <= K < N, e.g. 0/4");
    options.shard = {static_cast<int>(k), static_cast<int>(n)};
  }
  std::vector<SweepPoint> grid;
  if (spec.workload.empty()) {
    grid = expand(spec);
  } else {  // a workload sweep: its points come from the file alone
    if (!args.topologies.empty() || !args.collectives.empty() || args.algorithms != "all" ||
        !args.sizes.empty() || args.seeds != "0" || !args.sets.empty() || !args.faults.empty() ||
        args.engine != "auto")
      throw InputError(
          "a workload sweep takes its points from its file (grid, cases); --topology, "
          "--collective, --algorithm, --sizes, --set, --seeds, --fault and --engine are for "
          "collective sweeps");
    const WorkloadKind& kind = find_by_name(workload_kinds(), spec.workload, "workload");
    options.columns = kind.columns;
    grid = expand_workloads(spec, kind.check);
  }
  auto rows = run_sweep(grid, options);
  std::string summary = sweep_summary(rows, options.columns);
  if (args.out.empty()) {
    if (args.format == "csv") std::cout << sweep_csv_header(options.columns);
    for (const auto& row : rows)
      std::cout << (args.format == "csv" ? sweep_csv_line(row, options.columns) : sweep_json_line(row));
    std::cerr << summary;
  } else {
    std::cout << summary;
  }
  return 0;
}

// Tuning tables from sweep rows (workloads/tune.hpp has the rules).
int cmd_tune(const std::vector<std::string>& from, const std::string& format, const std::string& output,
             const std::string& command) {
  check_choice("format", format, {"text", "json"});
  std::unique_ptr<std::ofstream> file;
  if (!output.empty()) file = open_output(output, "output");
  std::vector<SweepRow> rows;
  for (std::size_t i = 0; i < from.size(); ++i) {
    auto more = read_sweep_rows(from[i], static_cast<int>(i));
    rows.insert(rows.end(), more.begin(), more.end());
  }
  auto tables = build_tuning_tables(rows);
  std::string text = format == "json" ? json_text(tuning_json(tables, ultrasim_version(), command), 2) + "\n"
                                      : tuning_text(tables);
  (file ? *file : std::cout) << text;
  return 0;
}

struct MoeArgs {
  MoeRunRequest request;
  std::string tokens, hidden, ffn, zipf = "0", capacity = "unlimited", seed = "0", expert_load,
                                   format = "table";
  std::vector<std::string> sets;
  bool no_dedup = false;
};

int print_moe(const nlohmann::ordered_json& result, const std::string& format) {
  if (format == "json") {
    std::cout << json_text(result, 2) << "\n";
  } else {
    std::cout << moe_table(result);
  }
  return result["verified"].get<bool>() ? 0 : 3;
}

int cmd_moe(MoeArgs args, const std::string& command) {
  check_choice("format", args.format, {"table", "json"});
  MoeConfig& c = args.request.config;
  c.tokens_per_chip = parse_count(args.tokens);
  c.hidden = parse_count(args.hidden);
  if (!args.ffn.empty()) c.ffn = parse_count(args.ffn);
  c.zipf = parse_ratio(args.zipf);
  if (args.capacity != "unlimited") c.capacity_factor = parse_ratio(args.capacity);
  c.seed = parse_seed(args.seed);
  c.dedup = !args.no_dedup;
  c.overrides = split_assignments(args.sets);
  if (!args.expert_load.empty()) {
    c.expert_load = read_expert_load(args.expert_load);
    c.expert_load_source = args.expert_load;
  }
  args.request.command = command;
  return print_moe(run_moe(args.request), args.format);
}

// `ultrasim workload FILE`: a JSON workload file; its "workload" field names the kind (sim/workloads.hpp).
// FILE "-" reads the standard input (as sweep points do).
int cmd_workload(const std::string& file, const WorkloadOutput& output) {
  std::string text;
  if (file == "-") {
    std::stringstream in;
    in << std::cin.rdbuf();
    text = in.str();
  } else {
    text = read_input_file(file, "workload file '" + file + "'", "a JSON workload object");
  }
  nlohmann::json w;
  try {
    w = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw InputError("workload file '" + file + "': " + json_error_text(e));
  }
  const WorkloadKind& kind = workload_kind_of(w, file);
  WorkloadOutput out = output;
  if (out.format.empty()) out.format = kind.formats.front();
  check_choice("format", out.format, kind.formats);
  return kind.run(w, file, out);
}

}  // namespace

int main(int argc, char** argv) {
  std::string command = "ultrasim";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];

  CLI::App app{"ultrasim: a discrete-event simulator of AI scale-up fabrics and their collectives"};
  app.set_version_flag("--version", ultrasim_version());
  app.require_subcommand(1);

  std::string list_what = "all", list_format = "text";
  auto* list = app.add_subcommand("list", "list topologies, collectives, algorithms or workloads");
  list->add_option("what", list_what, "topologies|collectives|algorithms|workloads (default: all)");
  list->add_option("--format", list_format, "text|json");

  std::string topo_spec, topo_format = "summary", topo_output;
  std::vector<std::string> topo_sets;
  auto* topo = app.add_subcommand("topology", "describe or export a topology");
  topo->add_option("spec", topo_spec, "NAME[:ARGS], e.g. trn3, switch:16, torus:4x4x4")->required();
  topo->add_option("--set", topo_sets, "override a parameter, name=value (repeatable)");
  topo->add_option("--format", topo_format, "summary|json|dot|simgrid-xml");
  topo->add_option("-o,--output", topo_output, "write to FILE instead of standard output");

  RunArgs run_args;
  auto* run = app.add_subcommand("run", "simulate one collective at one size");
  run->add_option("--topology", run_args.topology, "topology spec, e.g. trn3, switch:16")->required();
  run->add_option("--collective", run_args.collective, "collective name (ultrasim list collectives)")
      ->required();
  run->add_option("--algorithm", run_args.algorithm,
                  "algorithm name (ultrasim list algorithms), auto, or file:PATH (a JSON schedule)")
      ->required();
  run->add_option("--size", run_args.size, "size in bytes, units allowed: 1MiB, 64MB (alltoallv: uniform)");
  run->add_option("--traffic-matrix", run_args.traffic_matrix,
                  "alltoallv: per-pair bytes, JSON or CSV, row = sender (instead of --size)");
  run->add_option("--set", run_args.sets, "override a parameter, name=value (repeatable)");
  run->add_option("--format", run_args.format, "table|json|csv");
  run->add_option("--trace", run_args.trace,
                  "write a Chrome/Perfetto trace to FILE (gzipped if it ends in .gz)");
  run->add_option("--flows", run_args.flows,
                  "write one JSON line per flow to FILE (gzipped if it ends in .gz)");
  run->add_option(
      "--trace-window", run_args.trace_window,
      "FROM:TO: only flows and computes overlapping this time window in --trace/--flows (10us:2ms)");
  run->add_option("--trace-chips", run_args.trace_chips,
                  "only these chips' events in --trace/--flows (0-7,72)");
  run->add_option("--trace-aggregate", run_args.trace_aggregate,
                  "none|step: one trace event per flow, or per chip, step and direction (default none)");
  run->add_flag("--explain", run_args.explain,
                "explain the time: critical path, bounding links, busiest tiers and links, waiting chips");
  run->add_flag("--no-link-stats", run_args.no_link_stats,
                "skip the link statistics (no \"links\" in JSON): faster and smaller on very large runs");
  run->add_option("--link-stats", run_args.link_stats,
                  "write every link direction's statistics (bytes, busy time, utilisation) to FILE, CSV");
  run->add_option("--groups", run_args.groups,
                  "run on groups of chips at once: server|rack|domain|blocks:N|tp|ep|dp|pp|chips:0-3/4-7");
  run->add_option("--layout", run_args.layout,
                  "parallelism layout for --groups tp|ep|dp|pp: tp=4,ep=1,dp=36,pp=1");
  run->add_option("--seed", run_args.seed, "random seed (recorded; these algorithms are deterministic)");
  run->add_option("--dtype", run_args.dtype, "element type for the count/type columns (default float32)");
  run->add_option("--platform", run_args.platform,
                  "run on this exported SimGrid XML instead of building one");
  run->add_option("--engine", run_args.engine,
                  "auto (contention-free where it proves exact, else SimGrid), simgrid or contention-free");
  run->add_option("--fault", run_args.faults,
                  "inject a fault (repeatable): link-down:NAME@T[-T], switch-down:NAME@T[-T], "
                  "degrade:NAME=FRACTION[@T[-T]], slow-chip:RANK=FACTOR, late-chip:RANK@T");
  run->add_option("--simgrid-cfg", run_args.simgrid_config,
                  "extra SimGrid setting name:value after ultrasim's own (advanced; may break exactness)");

  SweepArgs sweep_args;
  auto* sweep = app.add_subcommand("sweep", "run a grid of points, each in its own process, as JSON Lines");
  sweep->add_option("--topology", sweep_args.topologies, "topology specs, comma-separated");
  sweep->add_option("--collective", sweep_args.collectives, "collectives, comma-separated");
  sweep->add_option("--algorithm", sweep_args.algorithms,
                    "algorithms, comma-separated, all or auto (default all)");
  sweep->add_option("--sizes", sweep_args.sizes,
                    "FROM:TO:xFACTOR, FROM:TO:+STEP or a list, e.g. 1KiB:4GiB:x2");
  sweep->add_option("--set", sweep_args.sets, "parameter values, name=v1,v2 (repeatable; crossed)");
  sweep->add_option("--engine", sweep_args.engine,
                    "auto|simgrid|contention-free, for every point (default auto)");
  sweep->add_option("--fault", sweep_args.faults,
                    "a fault every point runs with (repeatable; as run --fault)");
  sweep->add_option("--seeds", sweep_args.seeds, "seeds, e.g. 0,1,2 or 0:3 (default 0)");
  sweep->add_option("--file", sweep_args.file, "a JSON sweep file (flags given too override its keys)");
  sweep->add_option("--jobs", sweep_args.jobs, "points run at once (default: one per core)");
  sweep->add_option("--out", sweep_args.out, "write rows to FILE as they finish (sorted at the end)");
  sweep->add_option("--format", sweep_args.format, "jsonl|csv");
  sweep->add_flag("--resume", sweep_args.resume, "skip the points FILE already has");
  sweep->add_option("--shard", sweep_args.shard, "run the points with id mod N == K, as K/N");
  sweep->add_option("--timing", sweep_args.timing, "append per-point wall seconds to FILE");

  MoeArgs moe_args;
  MoeConfig& mc = moe_args.request.config;
  auto* moe = app.add_subcommand("moe", "simulate an MoE layer: dispatch, expert compute, combine");
  moe->add_option("--topology", mc.topology, "topology spec (default trn3)");
  moe->add_option("--experts", mc.experts, "routed experts E")->required();
  moe->add_option("--top-k", mc.top_k, "experts per token k")->required();
  moe->add_option("--tokens-per-chip", moe_args.tokens, "tokens in the batch on each chip N")->required();
  moe->add_option("--hidden", moe_args.hidden, "model dimension H")->required();
  moe->add_option("--ffn", moe_args.ffn, "an expert's intermediate dimension F (default H)");
  moe->add_option("--router", mc.router, "uniform (expected split) | random (drawn with --seed)");
  moe->add_option("--zipf", moe_args.zipf, "expert popularity exponent s (0: uniform)");
  moe->add_option("--expert-load", moe_args.expert_load, "measured load per expert: JSON array or CSV");
  moe->add_option("--capacity-factor", moe_args.capacity, "C, or unlimited (default)");
  moe->add_flag("--no-dedup", moe_args.no_dedup, "send a token once per expert, not once per chip");
  moe->add_option("--dispatch-dtype", mc.dispatch_dtype, "element of dispatched tokens (default float8)");
  moe->add_option("--combine-dtype", mc.combine_dtype, "element of combined outputs (default bfloat16)");
  moe->add_option("--weight-dtype", mc.weight_dtype, "element of expert weights (default float8)");
  moe->add_option("--micro-chunks", mc.micro_chunks, "pipeline the layer in this many chunks (default 1)");
  moe->add_option("--replicate-hot", mc.replicate_hot,
                  "give the K most popular experts --replicas replicas each");
  moe->add_option("--replicas", mc.replicas, "replicas per hot expert (default 1)");
  moe->add_option("--batches", mc.batches, "batches, routing drawn afresh each (random): p50/p99/max");
  moe->add_option("--seed", moe_args.seed, "random seed of the router (default 0)");
  moe->add_option("--set", moe_args.sets, "override a parameter, name=value (topology, model, chip, price)");
  moe->add_option("--engine", moe_args.request.engine, "auto|simgrid|contention-free");
  moe->add_option("--trace", moe_args.request.trace, "write the first batch's Perfetto trace to FILE");
  moe->add_option("--traffic-out", moe_args.request.traffic,
                  "write the first batch's dispatch matrix (run --traffic-matrix reads it)");
  moe->add_option("--format", moe_args.format, "table|json");

  std::string workload_file, workload_format, workload_trace;
  auto* workload = app.add_subcommand("workload", "run a workload file (JSON; README: workload files)");
  workload->add_option("file", workload_file, "the workload file, or - for standard input")->required();
  workload->add_option("--format", workload_format, "table|json, and csv for a collective (default table)");
  workload->add_option("--trace", workload_trace, "write a Perfetto trace to FILE");

  std::vector<std::string> tune_from;
  std::string tune_format = "text", tune_output;
  auto* tune = app.add_subcommand("tune", "best algorithm per size range from sweep rows (JSON Lines)");
  tune->add_option("--from", tune_from, "sweep rows, JSON Lines (repeatable)")->required();
  tune->add_option("--format", tune_format, "text|json");
  tune->add_option("-o,--output", tune_output, "write to FILE instead of standard output");

  if (argc > 1 && argv[1][0] != '-') {
    const std::vector<std::string> commands{"list", "topology", "run", "sweep", "tune", "moe", "workload"};
    if (std::find(commands.begin(), commands.end(), argv[1]) == commands.end())
      return fail(2, unknown_name_message("command", argv[1], commands));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (app.get_subcommands().empty())
      return fail(2, std::string(e.what()) +
                         "; expected a command: list, topology, run, sweep, tune, moe or workload");
    return fail(2, e.what());
  }

  try {
    if (*list) return cmd_list(list_what, list_format);
    if (*topo) return cmd_topology(topo_spec, topo_sets, topo_format, topo_output);
    if (*run) return run_collective(run_args, command);
    if (*sweep) return cmd_sweep(sweep_args);
    if (*tune) return cmd_tune(tune_from, tune_format, tune_output, command);
    if (*moe) return cmd_moe(moe_args, command);
    if (*workload) return cmd_workload(workload_file, {workload_format, workload_trace, command});
  } catch (const InputError& e) {
    return fail(2, e.what());
  } catch (const SimulationError& e) {
    return fail(3, e.what());
  } catch (const std::bad_alloc&) {
    // The memory guard's estimate fell short (or other processes took the memory meanwhile).
    return fail(2, "out of memory: this configuration is too large for this machine; try a smaller one");
  } catch (const std::exception& e) {
    return fail(1, std::string("internal error: ") + e.what());
  }
  return 1;
}
