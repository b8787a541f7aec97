// `ultrasim serve`: a model served on the fabric from flags (workloads/serving/serving_run.hpp runs it;
// workload files with "workload": "serving" give the same).
#include <algorithm>

#include "sim/app/commands/command.hpp"
#include "sim/app/commands/declared_options.hpp"
#include "sim/engines/engines.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "workloads/experiments/sweep.hpp"  // split_assignments
#include "workloads/registry.hpp"
#include "workloads/serving/capacity_run.hpp"
#include "workloads/serving/production_run.hpp"
#include "workloads/serving/serving_report.hpp"
#include "workloads/serving/serving_run.hpp"

namespace ultrasim {
namespace {

struct ServeArgs {
  ServingConfig config;
  DeclaredFlags<ServingConfig> flags;
  ProductionConfig production;
  DeclaredFlags<ProductionConfig> arrivals;
  std::string format = "table", trace;
  std::vector<std::string> sets;
};

int cmd_serve(ServeArgs args, const std::string& command) {
  check_choice("format", args.format, {"table", "json"});
  ServingConfig& c = args.config;
  args.flags.apply(c);
  c.overrides = split_assignments(args.sets);
  ProductionConfig& p = args.production;
  args.arrivals.apply(p);
  if (p.capacity) {
    if (!p.timeline.empty() || !p.per_request.empty() || !args.trace.empty())
      throw InputError(
          "--timeline, --requests-out and --trace are for one rate's run, not the capacity "
          "search (its trials: --curve)");
  } else if (!p.curve.empty()) {
    throw InputError("--curve is the capacity search's (--capacity)");
  }
  if (!p.capacity && p.requests_file.empty() && p.generator.rate == 0) {
    auto given = args.arrivals.given();
    // A static batch may draw its requests' lengths as arrivals would (its attention ranks then differ).
    if (const auto d = std::find(given.begin(), given.end(), "--length-dist"); d != given.end()) {
      c.length_dist = p.generator.length_dist;
      given.erase(d);
    }
    if (!given.empty() || !p.timeline.empty() || !p.per_request.empty())
      throw InputError(
          (given.empty() ? std::string("--timeline and --requests-out are") : given.front() + " is") +
          " for request arrivals (--requests or --rate)");
    return print_workload_result(run_serving(c, command, args.trace), args.format, serving_table);
  }
  std::vector<std::string> given;  // the serving options given, by field name
  for (const auto& o : serving_options())
    if (args.flags.was_given(o.name)) given.push_back(o.name);
  if (const std::string refusal = static_only_refusal(given, !p.requests_file.empty()); !refusal.empty())
    throw InputError(refusal);
  if (!p.generator.shape.empty())
    for (const char* name : {"input_len", "output_len", "lengths"})
      if (args.flags.was_given(name))
        throw InputError(flag_of(name) +
                         " with --trace-shape: the shape draws the lengths (ultrasim list shapes)");
  c.length_dist = p.generator.length_dist;  // as the generator draws them (the result's config says so)
  p.serving = c;
  p.share_requests();
  if (p.capacity) return print_workload_result(run_capacity(p, command), args.format, capacity_table);
  return print_workload_result(run_production(p, command, args.trace), args.format, production_table);
}

}  // namespace

Command serve_command() {
  return {"serve", "simulate serving a model: prefill (TTFT) and decode (TPOT) steps, layer by layer",
          [](CLI::App& app) {
            auto args = std::make_shared<ServeArgs>();
            ServeArgs& a = *args;
            a.flags.add(app, serving_options());
            app.add_option("--set", a.sets,
                           "override a parameter, name=value (topology, model, chip, price)");
            add_stack_option(app, a.sets,
                             "software stack: ideal | nccl | neuron | FILE.json (default: the topology's)");
            app.add_option("--trace", a.trace,
                           "write a Perfetto trace of batch 0's step at the first batch size");
            // What applies only with request arrivals, under a heading of its own in --help.
            const std::string arrivals = "Request arrivals (with --rate or --requests; serving/README.md)";
            a.arrivals.add(app, production_options(), {}, {}, arrivals);
            app.add_option("--timeline", a.production.timeline, "write each iteration as a CSV row")
                ->group(arrivals);
            app.add_option("--requests-out", a.production.per_request,
                           "write each request's times and latencies as a CSV row")
                ->group(arrivals);
            app.add_option("--curve", a.production.curve,
                           "--capacity: write each trial rate's attainment and latencies as a CSV row")
                ->group(arrivals);
            app.add_option("--format", a.format, "table|json");
            return [args](const std::string& command_line) { return cmd_serve(*args, command_line); };
          }};
}

}  // namespace ultrasim
