// `ultrasim plan`: the cheapest deployment that meets a pair of serving SLOs
// (workloads/experiments/plan.hpp), its search run as a workload sweep of `serve` points with arrivals.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

#include "sim/app/commands/command.hpp"
#include "sim/app/commands/declared_options.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "workloads/experiments/plan.hpp"
#include "workloads/registry.hpp"
#include "workloads/serving/production_run.hpp"
#include "workloads/serving/requests.hpp"

namespace ultrasim {
namespace {

struct PlanArgs {
  DeclaredFlags<ProductionConfig> arrivals;  // kArrivalOptions
  DeclaredFlags<ServingConfig> serving;      // kPlanServing
  std::string topologies = "trn3", tps = "1", schedulers = "continuous,chunked,disaggregated",
              shares = "0.25,0.5", attainment = "0.9";
  std::string jobs, shard, out, emit, format = "table", grid_cache;
  std::vector<std::string> from;
  bool resume = false;
  bool capacity = false;  // size a fleet by each deployment's capacity
  std::uint64_t max_replicas = 1000;
};

// The serving options plan takes (each deployment's are searched); the arrival ones are kArrivalOptions.
const std::vector<std::string> kPlanServing{"model", "input_len", "output_len", "seed"};

// Plan's defaults: more requests than serve's, for a steadier tail.
ProductionConfig plan_defaults() {
  ProductionConfig p;
  p.generator.count = 2000;
  return p;
}

// The value of each option in `names` that `config` holds (a given one, or its default), in table order.
template <class Config>
void put_values(nlohmann::ordered_json& out, const OptionTable<Config>& table, const Config& config,
                const std::vector<std::string>& names) {
  for (const auto& o : table)
    if (std::find(names.begin(), names.end(), o.name) != names.end() && !o.value(config).is_null())
      out[o.name] = o.value(config);
}

// The serving workload every deployment runs: the model, the requests and the SLOs.
nlohmann::ordered_json plan_base(const PlanArgs& a) {
  ServingConfig serving;
  a.serving.apply(serving);
  ProductionConfig p = plan_defaults();
  a.arrivals.apply(p);
  if (p.requests_file.empty() && p.generator.rate == 0)
    throw InputError("plan: give the requests, --requests FILE or --rate QPS");
  if (!p.requests_file.empty())
    check_input_file(p.requests_file, "request trace '" + p.requests_file + "'", "a CSV or JSON Lines file");
  if (p.slo_ttft == 0 || p.slo_tpot == 0) throw InputError("plan: give both SLOs, --slo-ttft and --slo-tpot");
  if (a.capacity && a.arrivals.was_given("num_requests"))
    throw InputError(
        "plan --capacity: each deployment's search sets its requests; --num-requests is for "
        "plan without --capacity");
  nlohmann::ordered_json base;
  put_values(base, serving_options(), serving, kPlanServing);
  // With --capacity the rate is the fleet's target, not a deployment's: the search sets each one's.
  std::vector<std::string> left_out{"rate", "num_requests", "burstiness", "length_dist"};
  if (a.capacity) left_out = {"rate", "num_requests"};
  if (!a.capacity && p.requests_file.empty()) left_out.clear();
  std::vector<std::string> arrivals;
  for (const auto& name : kArrivalOptions)
    if (std::find(left_out.begin(), left_out.end(), name) == left_out.end()) arrivals.push_back(name);
  if (a.capacity && !p.requests_file.empty())
    std::erase(arrivals, std::string("burstiness")), std::erase(arrivals, std::string("length_dist"));
  put_values(base, production_options(), p, arrivals);
  if (a.capacity) base["capacity"] = true, base["attainment"] = parse_ratio(a.attainment);
  return base;
}

// The fleet's target: --rate, or the trace's mean rate.
double target_rate(const PlanArgs& a) {
  ProductionConfig p = plan_defaults();
  a.arrivals.apply(p);
  if (p.requests_file.empty()) return p.generator.rate;
  const std::vector<ServingRequest> trace = read_request_trace(p.requests_file);
  const double span = trace.back().arrival_s - trace.front().arrival_s;
  return trace.size() > 1 && span > 0 ? static_cast<double>(trace.size() - 1) / span : 0;
}

PlanSpec plan_spec(const PlanArgs& a) {
  PlanSpec spec;
  spec.base = plan_base(a);
  spec.topologies = split_items(a.topologies, ',');
  spec.tps.clear();
  for (const auto& t : split_items(a.tps, ','))
    spec.tps.push_back(static_cast<int>(with_context("--tp", [&] { return parse_count(t); })));
  spec.schedulers = split_items(a.schedulers, ',');
  spec.prefill_shares.clear();
  for (const auto& f : split_items(a.shares, ','))
    spec.prefill_shares.push_back(with_context("--prefill-share", [&] { return parse_ratio(f); }));
  spec.attainment = with_context("--attainment", [&] { return parse_ratio(a.attainment); });
  spec.capacity = a.capacity, spec.max_replicas = a.max_replicas;
  if (a.capacity) spec.target_rate = target_rate(a);
  spec.validate();
  return spec;
}

// Rows written by the sweeps of a plan (their --out files, shards in any order): the last row per point.
std::vector<nlohmann::ordered_json> read_rows(const std::vector<std::string>& files) {
  std::map<std::int64_t, nlohmann::ordered_json> rows;
  for (const auto& path : files) {
    const std::string text = read_input_file(path, "rows file '" + path + "'", "JSON Lines of sweep rows");
    std::size_t start = 0, line_no = 0;
    while (start < text.size()) {
      auto end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      const std::string line = text.substr(start, end - start);
      start = end + 1, ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = "rows file '" + path + "' line " + std::to_string(line_no);
      nlohmann::ordered_json row;
      try {
        row = parse_ordered_json_input(line, where);
      } catch (const nlohmann::json::parse_error&) {
        throw InputError(where + ": not JSON; --from reads the JSON Lines a plan's sweep wrote (--out ROWS)");
      }
      if (!row.is_object() || !row.contains("point") || !row["point"].is_number_integer())
        throw InputError(where + ": not a sweep row");
      if (const std::string problem = plan_row_problem(row); !problem.empty())
        throw InputError(where + ", point " + std::to_string(row["point"].get<std::int64_t>()) + ": " +
                         problem);
      rows[row["point"].get<std::int64_t>()] = row;
    }
  }
  std::vector<nlohmann::ordered_json> out;
  for (auto& [id, row] : rows) out.push_back(std::move(row));
  return out;
}

int plan(const PlanArgs& a) {
  check_choice("format", a.format, {"table", "json"});
  std::vector<nlohmann::ordered_json> rows;
  double attainment = with_context("--attainment", [&] { return parse_ratio(a.attainment); });
  double target = 0;
  if (!a.from.empty()) {
    if (a.capacity) {
      target = target_rate(a);
      if (!(target > 0)) throw InputError("plan --capacity --from: give the fleet's target, --rate QPS");
    }
    rows = read_rows(a.from);
  } else {
    PlanSpec spec = plan_spec(a);
    target = spec.target_rate;
    if (!a.grid_cache.empty()) spec.base["grid_cache"] = a.grid_cache;
    if (!a.emit.empty()) {
      OutputFile file(a.emit, "sweep file");
      file << json_text(plan_sweep_file(spec), 2) << "\n";
      file.close();
      std::cout << "wrote " << a.emit << ": run it with ultrasim sweep --file " << a.emit
                << " [--shard K/N] --out ROWS, then ultrasim plan --from ROWS...\n";
      return 0;
    }
    const WorkloadKind& kind = find_by_name(workload_kinds(), "serving", "workload");
    // The deployments of one fabric and model share the step-time model's points (a temporary directory
    // unless --grid-cache names one): the answer is the same, found sooner.
    PlanSpec shared = spec;
    std::string temp;
    if (a.grid_cache.empty()) {  // under $TMPDIR (Slurm's per job), else /tmp; removed however plan ends
      const std::string base = temp_directory();
      std::string dir = base + "/ultrasim-plan-XXXXXX";
      if (::mkdtemp(dir.data()) == nullptr)
        throw InputError("plan: cannot make a temporary directory in " + base);
      temp = dir;
    }
    shared.base["grid_cache"] = a.grid_cache.empty() ? temp : a.grid_cache;
    struct Remove {
      std::string dir;
      ~Remove() {
        if (!dir.empty()) std::filesystem::remove_all(dir);
      }
    } remove{temp};
    const std::vector<SweepPoint> grid = expand_workloads(plan_sweep(shared), kind.check);
    SweepOptions options;
    options.jobs = parse_jobs(a.jobs);
    options.out = a.out, options.resume = a.resume, options.binary = "/proc/self/exe";
    options.columns =
        a.capacity
            ? std::vector<std::string>{"capacity_request_rate", "cost_per_mtok_usd", "binding"}
            : std::vector<std::string>{"cost_per_mtok_usd", "good_fraction", "p99_ttft_s", "p99_tpot_s"};
    if (!a.shard.empty()) options.shard = parse_shard(a.shard);
    rows = run_sweep(grid, options);
    if (options.shard) {
      std::cout << rows.size() << " deployments of shard " << a.shard << (a.out.empty() ? "" : " in " + a.out)
                << "; rank every shard's rows with ultrasim plan --from ROWS...\n";
      return 0;
    }
  }
  const nlohmann::ordered_json answer =
      a.capacity ? rank_fleet(rows, target, a.max_replicas) : rank_plan(rows, attainment);
  const std::string table = a.capacity ? fleet_table(answer) : plan_table(answer);
  std::cout << (a.format == "json" ? json_text(answer, 2) + "\n" : printable_text(table, true));
  return 0;
}

}  // namespace

Command plan_command() {
  return {
      "plan", "the cheapest deployment that meets serving SLOs: a search over deployments, run as a sweep",
      [](CLI::App& app) {
        auto args = std::make_shared<PlanArgs>();
        PlanArgs& a = *args;
        a.arrivals.add(app, production_options(), kArrivalOptions, plan_defaults());
        a.serving.add(app, serving_options(), kPlanServing);
        app.add_option("--attainment", a.attainment,
                       "the share of requests that must meet both SLOs (default 0.9)");
        app.add_option("--topology", a.topologies, "systems to search, comma-separated (default trn3)");
        app.add_option("--tp", a.tps, "tensor-parallel sizes to search, comma-separated (default 1)");
        app.add_option("--scheduler", a.schedulers,
                       "schedulers to search, comma-separated (default continuous,chunked,disaggregated)");
        app.add_option("--prefill-share", a.shares,
                       "disaggregated: prefill shares of the chips to search (default 0.25,0.5)");
        app.add_option("--jobs", a.jobs, "deployments run at once (default: one per core)");
        app.add_option("--shard", a.shard, "K/N: run only deployments with point mod N == K");
        app.add_option("--out", a.out, "write the deployments' rows to FILE as they finish");
        app.add_flag("--resume", a.resume, "continue the sweep in --out FILE");
        app.add_option("--emit-sweep", a.emit, "write the search as a sweep file and stop (for a cluster)");
        app.add_option("--grid-cache", a.grid_cache,
                       "a directory where the deployments share the step-time model's points (default: a "
                       "temporary one)");
        app.add_option("--from", a.from, "rank the rows of earlier runs (--out files of plan or sweep)");
        app.add_flag("--capacity", a.capacity,
                     "size a fleet: each deployment's capacity at the SLOs (serve --capacity) sets the "
                     "replicas that serve --rate (or the trace's rate); the cheapest fleet wins");
        app.add_option("--max-replicas", a.max_replicas,
                       "--capacity: the largest fleet that counts (default 1000)")
            ->check(CLI::Range(1, 1000000));
        app.add_option("--format", a.format, "table|json");
        return [args](const std::string&) { return plan(*args); };
      }};
}

}  // namespace ultrasim
