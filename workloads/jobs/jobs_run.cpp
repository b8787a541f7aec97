#include "workloads/jobs/jobs_run.hpp"

#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>

#include "collectives/group_transport.hpp"
#include "sim/analysis/link_stats.hpp"
#include "sim/analysis/report.hpp"
#include "sim/analysis/trace.hpp"
#include "sim/engines/runner.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/options.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/units.hpp"
#include "workloads/moe/moe.hpp"
#include "workloads/workload_file.hpp"

namespace ultrasim {
namespace {

// What a chip of a job that starts late does until then, in traces.
const char* const kWaiting = "waiting for its job's start";

struct Job {
  std::string name, chips_text, kind;  // name, chips: the file's fields; kind: its workload's
  std::vector<int> chips;              // the fabric's ranks, ascending; the job's rank r is chips[r]
  double start_s = 0;
  nlohmann::json workload;  // the file's field (a path already read): what `prepared` is made from
  std::unique_ptr<PreparedWorkload> prepared;
};

// A chip's sends in the shared run (a chip's part may run again: `auto` reruns what an engine declined).
struct Sends {
  std::uint64_t transfers = 0, bytes = 0;
};

// The transport a job's chip sees: its own ranks (GroupTransport) over the fabric's, counting its sends.
class CountingTransport : public ForwardingTransport {
 public:
  CountingTransport(Transport& inner, Sends& sends) : ForwardingTransport(inner), sends_(sends) {}
  RequestPtr send(int dst, Message message, int step) override {
    ++sends_.transfers, sends_.bytes += message.bytes();
    return inner_.send(dst, std::move(message), step);
  }

 protected:
  std::unique_ptr<Transport> wrap(Transport& child) override {
    return std::make_unique<CountingTransport>(child, sends_);
  }

 private:
  Sends& sends_;
};

// Every job's program at once, each on its chips: a chip idles until its job starts, then runs its job's
// program under the job's ranks. Jobs' chips are disjoint, so their messages never match each other's.
class SharedFabric : public Program {
 public:
  SharedFabric(std::vector<Job>& jobs, int p) : jobs_(jobs), job_of_(p, -1), local_(p, -1), sends_(p) {
    for (std::size_t j = 0; j < jobs.size(); ++j)
      for (std::size_t r = 0; r < jobs[j].chips.size(); ++r)
        job_of_[jobs[j].chips[r]] = static_cast<int>(j), local_[jobs[j].chips[r]] = static_cast<int>(r);
  }
  bool takes_part(int rank) const override {
    return job_of_[rank] >= 0 && jobs_[job_of_[rank]].prepared->program().takes_part(local_[rank]);
  }
  void run(Transport& fabric) override {
    Job& job = jobs_[job_of_[fabric.rank()]];
    if (job.start_s > 0) fabric.compute(job.start_s, kWaiting);
    sends_[fabric.rank()] = {};
    CountingTransport counting(fabric, sends_[fabric.rank()]);
    // The job's algorithms are placed on its own topology (`topology@chips`), whose chips are its ranks.
    GroupTransport transport(counting, job.chips, local_[fabric.rank()], 0, GroupChips::kOwnTopology);
    job.prepared->program().run(transport);
  }
  Verdict verdict() const override {
    Verdict all;
    for (const Job& job : jobs_) {
      const Verdict v = job.prepared->program().verdict();
      if (v.wrong > 0 && all.wrong == 0) all.first_error = "job '" + job.name + "': " + v.first_error;
      all.wrong += v.wrong;
    }
    return all;
  }
  const Sends& sends(int chip) const { return sends_[chip]; }

 private:
  std::vector<Job>& jobs_;
  std::vector<int> job_of_, local_;
  std::vector<Sends> sends_;  // per chip
};

// The shared run seen from one job: its chips' records under its ranks, time 0 at its start.
SimResult job_view(const SimResult& run, const SharedFabric& shared, const Job& job, int p) {
  std::vector<int> local(p, -1);
  for (std::size_t r = 0; r < job.chips.size(); ++r) local[job.chips[r]] = static_cast<int>(r);
  auto mine = [&](int chip) { return chip < 0 || local[chip] >= 0; };  // -1: a switch (switch-reduce)
  SimResult view;
  view.engine = run.engine;
  view.verdict = job.prepared->program().verdict();
  for (int chip : job.chips) {
    view.transfers += shared.sends(chip).transfers, view.bytes_sent += shared.sends(chip).bytes;
    view.chip_finish.push_back(std::max(0.0, run.chip_finish[chip] - job.start_s));
    view.time_s = std::max(view.time_s, view.chip_finish.back());
  }
  for (TransferRecord x : run.transfer_records) {
    if ((x.src < 0 && x.dst < 0) || !mine(x.src) || !mine(x.dst)) continue;
    x.src = x.src < 0 ? -1 : local[x.src], x.dst = x.dst < 0 ? -1 : local[x.dst];
    x.start -= job.start_s, x.end -= job.start_s, x.wire_end -= job.start_s;
    view.transfer_records.push_back(x);
  }
  for (ComputeRecord c : run.compute_records) {
    if (local[c.chip] < 0 || c.what == kWaiting) continue;
    c.chip = local[c.chip], c.start -= job.start_s, c.end -= job.start_s;
    view.compute_records.push_back(std::move(c));
  }
  return view;
}

// A job's workload: the object, or the file a string names (`where`: the field).
nlohmann::json job_workload(const nlohmann::json& field, const std::string& where) {
  if (field.is_object()) return field;
  if (!field.is_string())
    throw InputError(where + " must be a workload object or the path of a workload file");
  const std::string path = field.get<std::string>();
  const std::string text =
      read_input_file(path, where + ": workload file '" + path + "'", "a JSON workload object");
  try {
    return parse_json_input(text, where + ": workload file '" + path + "'");
  } catch (const InputError&) {
    throw;  // already names the file
  } catch (const std::exception& e) {
    throw InputError(where + ": workload file '" + path + "': " + json_error_text(e));
  }
}

// The fields of a job (jobs[i]), each declared once, read in two steps: its name (default "jobI"), then
// the rest, whose errors name the job by it. Its description is free text.
const OptionTable<Job>& job_name_options() {
  static const OptionTable<Job> table{
      text_option<Job>("name", &Job::name, {}, "the job's name in the results", "jobI, I its index")};
  return table;
}
const OptionTable<Job>& job_options() {
  static const OptionTable<Job> table = [] {
    OptionTable<Job> t;
    Option<Job> chips{"chips", "a chip list, e.g. \"0-71\"", "the fabric's chips the job runs on (its ranks)",
                      "required"};
    chips.required = true;
    chips.set = [](Job& job, const nlohmann::json& v, const std::string& where) {
      if (!v.is_string()) throw InputError(where + " must list its chips, e.g. \"0-71\"");
      job.chips_text = v.get<std::string>();
    };
    chips.value = [](const Job& job) { return nlohmann::json(job.chips_text); };
    t.push_back(chips);
    t.push_back(time_field<Job>("start", &Job::start_s, "when the job starts", "0: with the others"));
    Option<Job> workload{"workload", "a workload object, or the path of a workload file",
                         "what the job runs (a workload that can run as a job)", "required"};
    workload.required = true;
    workload.set = [](Job& job, const nlohmann::json& v, const std::string& where) {
      job.workload = job_workload(v, where);
    };
    workload.value = [](const Job& job) { return job.workload; };
    t.push_back(workload);
    return t;
  }();
  return table;
}

// The names of `table`'s fields, after `extra`.
template <class Config>
std::vector<std::string> field_names(const OptionTable<Config>& table, std::vector<std::string> extra) {
  for (const auto& o : table) extra.push_back(o.name);
  return extra;
}

// Reads job `index` of the file onto the fabric `topology` (p chips) with the file's `set`.
Job read_job(const nlohmann::json& j, std::size_t index, const std::string& file, const std::string& topology,
             int p, const nlohmann::json& fabric_set, const std::string& command) {
  Job job;
  job.name = "job" + std::to_string(index);
  std::string where = "workload file '" + file + "': jobs[" + std::to_string(index) + "]";
  read_options(job_name_options(), j, where, field_names(job_options(), {"description"}), job);
  where = "workload file '" + file + "': job '" + job.name + "'";
  read_options(job_options(), j, where, field_names(job_name_options(), {"description"}), job);
  job.chips = parse_chip_list(job.chips_text, p, where + ": chips");
  nlohmann::json w = job.workload;
  const std::string label = file + " (job " + job.name + ")";  // the workload's "file" in its errors
  const WorkloadKind& kind = workload_kind_of(w, label);
  if (!kind.prepare) throw InputError(where + ": a " + kind.name + " workload cannot run as a job");
  job.kind = kind.name;
  if (w.contains("topology") && w.at("topology") != topology)
    throw InputError(where + ": its workload names topology " + json_text(w.at("topology")) +
                     "; a job runs on the file's (" + topology + "): leave 'topology' out");
  if (w.contains("engine")) throw InputError(where + ": the file's 'engine' runs every job; leave it out");
  w["topology"] = topology + "@" + job.chips_text;
  nlohmann::json set = fabric_set;
  if (w.contains("set")) {
    if (!w.at("set").is_object()) throw InputError(where + ": its workload's 'set' must be an object");
    set.update(w.at("set"));  // the job's own parameters over the fabric's
  }
  if (!set.empty()) w["set"] = set;
  job.prepared = kind.prepare(w, label, command);
  if (!job.prepared->machine().faults.empty()) throw InputError(where + ": a job cannot have faults");
  return job;
}

// The file's jobs, on the fabric; throws InputError when two share a chip or one changes the fabric.
std::vector<Job> read_jobs(const nlohmann::json& list, const std::string& file, const Machine& fabric,
                           const std::string& topology, const nlohmann::json& set,
                           const std::string& command) {
  const std::string where = "workload file '" + file + "'";
  const int p = fabric.p();
  std::vector<Job> jobs;
  std::vector<int> owner(p, -1);
  const nlohmann::json fabric_params = fabric.topology->params().to_json();
  for (std::size_t i = 0; i < list.size(); ++i) {
    jobs.push_back(read_job(list[i], i, file, topology, p, set, command));
    const Job& job = jobs.back();
    for (int c : job.chips) {
      if (owner[c] >= 0)
        throw InputError(where + ": chip " + std::to_string(c) + " is in jobs '" + jobs[owner[c]].name +
                         "' and '" + job.name + "'; jobs run on chips of their own");
      owner[c] = static_cast<int>(i);
    }
    if (job.prepared->machine().topology->params().to_json() != fabric_params)
      throw InputError(where + ": job '" + job.name +
                       "' changes a parameter of the fabric in its 'set'; set it in the file's 'set'");
  }
  return jobs;
}

// The fabric and the jobs of a file, ready to run.
struct JobsPlan {
  std::string topology;
  Engine engine = Engine::kAuto;
  nlohmann::json job_list = nlohmann::json::array();  // the file's jobs, read once the fabric is built
  Machine fabric;
  std::vector<Job> jobs;
};

// A jobs file's fields, each declared once; besides them it may have workload, description and set (the
// fabric's parameters, and every job's).
const OptionTable<JobsPlan>& jobs_file_options() {
  static const OptionTable<JobsPlan> table = [] {
    OptionTable<JobsPlan> t;
    Option<JobsPlan> topology{"topology", "a whole topology, the fabric the jobs share",
                              "the fabric: each job runs on chips of it", "required"};
    topology.required = true;
    topology.set = [](JobsPlan& plan, const nlohmann::json& v, const std::string& where) {
      plan.topology = option_text(v, where);
      if (plan.topology.empty())
        throw InputError(where + " must be a whole topology, the fabric the jobs share, not \"\"");
      if (!split_chip_selection(plan.topology).second.empty())
        throw InputError(where + ": the jobs' fabric is a whole topology, not " + plan.topology);
    };
    topology.value = [](const JobsPlan& plan) { return nlohmann::json(plan.topology); };
    t.push_back(topology);
    t.push_back(engine_option<JobsPlan>(
        &JobsPlan::engine,
        "every job on the shared fabric: contention-free where it proves exact, else flow, else SimGrid"));
    Option<JobsPlan> jobs{"jobs", "a non-empty list of jobs", "the jobs: name, chips, start, workload",
                          "required"};
    jobs.required = true;
    jobs.set = [](JobsPlan& plan, const nlohmann::json& v, const std::string& where) {
      if (!v.is_array() || v.empty()) throw InputError(where + " must be a non-empty list of jobs");
      plan.job_list = v;
    };
    jobs.value = [](const JobsPlan& plan) { return plan.job_list; };
    t.push_back(jobs);
    return t;
  }();
  return table;
}

JobsPlan plan_jobs(const nlohmann::json& w, const std::string& file, const std::string& command) {
  const std::string where = "workload file '" + file + "'";
  JobsPlan plan;
  read_options(jobs_file_options(), w, where, {"workload", "description", "set"}, plan);
  const auto overrides = set_overrides(w, where);
  nlohmann::json set = nlohmann::json::object();  // as every job's workload reads it (set_overrides)
  for (const auto& [name, value] : overrides) set[name] = value;
  // The fabric: the topology with the file's set (the chip's parameters belong to the jobs' workloads).
  ParamSet chip(chip_params());
  plan.fabric = build_machine(plan.topology, chip.apply_known(overrides), chip.names(), true);
  plan.jobs = read_jobs(plan.job_list, file, plan.fabric, plan.topology, set, command);
  return plan;
}

}  // namespace

nlohmann::ordered_json run_jobs(const nlohmann::json& w, const std::string& file, const std::string& command,
                                const std::string& trace_path) {
  JobsPlan plan = plan_jobs(w, file, command);
  std::vector<Job>& jobs = plan.jobs;
  const Machine& fabric = plan.fabric;
  const std::string& topology = plan.topology;
  std::unique_ptr<OutputFile> trace;
  if (!trace_path.empty()) trace = std::make_unique<OutputFile>(trace_path, "trace");

  // Each job alone on its part of the fabric, in child processes (before this process simulates).
  RunOptions options;
  options.engine = plan.engine;
  std::vector<double> alone;
  for (const auto& v : run_in_children(
           jobs.size(),
           [&](std::size_t j) {
             return std::vector<double>{
                 simulate(jobs[j].prepared->machine(), jobs[j].prepared->program(), options).time_s};
           },
           [&](std::size_t j) {
             throw SimulationError("job '" + jobs[j].name + "' failed to simulate alone");
           },
           [](const std::vector<double>& v) { return v.size() == 1; }, jobs.size()))
    alone.push_back(v.front());

  SharedFabric shared(jobs, fabric.p());
  options.record = true;  // each job's result reads its chips' records
  const SimResult run = simulate(fabric, shared, options);

  nlohmann::ordered_json out = workload_result(command, "jobs", topology, fabric.p());
  out["time_s"] = run.time_s;
  out["jobs"] = nlohmann::ordered_json::array();
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const Job& job = jobs[j];
    const SimResult view = job_view(run, shared, job, fabric.p());
    out["jobs"].push_back({{"name", job.name},
                           {"workload", job.kind},
                           {"chips", job.chips_text},
                           {"chip_count", job.chips.size()},
                           {"start_s", job.start_s},
                           {"time_s", view.time_s},
                           {"alone_s", alone[j]},
                           {"slowdown", alone[j] > 0 ? view.time_s / alone[j] : 1.0},
                           {"result", job.prepared->result(view)}});
  }
  // The links' statistics are the fabric's, every job's flows together (a job's alone would replay its
  // flows' max-min sharing without the others').
  const RecordPaths paths(*fabric.routes, fabric.faults);
  out["links"] = link_stats_json(*fabric.topology, compute_link_stats(*fabric.topology, paths, fabric.faults,
                                                                      run.transfer_records, run.time_s));
  close_workload_result(out, run.verdict.wrong, run.verdict.first_error, run, fabric.topology->params());
  if (trace) {
    write_chrome_trace(*trace, *fabric.topology, run, nullptr, nlohmann::json::parse(json_text(out)),
                       TraceOptions{});
    trace->close();
  }
  return out;
}

std::string jobs_table(const nlohmann::ordered_json& r) {
  auto pad_left = [](const std::string& text, std::size_t width) {
    return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
  };
  std::ostringstream out;
  auto us = [](const nlohmann::ordered_json& v) { return fixed_text(v.get<double>() * 1e6, 2); };
  out << "# " << r["jobs"].size() << " jobs sharing " << r["topology"].get<std::string>() << " ("
      << r["chips"] << " chips), engine " << r["engine"].get<std::string>() << "\n";
  out << "job                  workload    chips          start(us)     time(us)    alone(us)  slowdown\n";
  for (const auto& j : r["jobs"]) {
    std::string line = j["name"].get<std::string>();
    line.resize(std::max<std::size_t>(line.size() + 1, 21), ' ');
    std::string kind = j["workload"].get<std::string>();
    kind.resize(std::max<std::size_t>(kind.size() + 1, 12), ' ');
    std::string chips = j["chips"].get<std::string>();
    chips.resize(std::max<std::size_t>(chips.size() + 1, 13), ' ');
    out << line << kind << chips << pad_left(us(j["start_s"]), 10) << pad_left(us(j["time_s"]), 13)
        << pad_left(us(j["alone_s"]), 13) << pad_left(fixed_text(j["slowdown"].get<double>(), 4), 10) << "\n";
  }
  out << "makespan             " << us(r["time_s"]) << " us\n";
  out << "verified             " << (r["verified"].get<bool>() ? "yes" : "NO") << "\n";
  for (const auto& j : r["jobs"]) {
    for (const WorkloadKind& kind : workload_kinds())
      if (kind.name == j["workload"].get<std::string>() && kind.table != nullptr)
        out << "\n## job '" << j["name"].get<std::string>() << "' (times from its start)\n"
            << kind.table(j["result"]);
  }
  return out.str();
}

WorkloadKind jobs_workload() {
  return {"jobs",
          "several workloads, each on chips of its own, sharing one fabric: each job's result and slowdown",
          "",
          {"time_s", "verified"},
          {"table", "json"},
          [](const nlohmann::json& w, const std::string& file) { plan_jobs(w, file, ""); },
          [](const nlohmann::json& w, const std::string& file, const WorkloadOutput& output) {
            return print_workload_result(run_jobs(w, file, output.command, output.trace), output.format,
                                         jobs_table);
          },
          jobs_table};
}

}  // namespace ultrasim
