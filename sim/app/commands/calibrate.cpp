// `ultrasim calibrate`: fits a software stack to measured collective times (nccl-tests output, text or
// -J JSON, or nccom-test output) and writes it as a stack file (workloads/experiments/calibrate.hpp has the
// fit).
#include <cstdio>
#include <iostream>
#include <memory>

#include "collectives/stack.hpp"
#include "sim/app/commands/command.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "workloads/experiments/calibrate.hpp"

namespace ultrasim {
namespace {

struct CalibrateArgs {
  CalibrationRequest request;
  std::vector<std::string> from, sets;
  std::string hold_out, output, format = "text";
};

std::string report_text(const Calibration& c) {
  const Protocol& p = c.fitted.protocols.front();
  char line[256];
  std::string out = "# fitted on " +
                    std::to_string(std::count_if(c.points.begin(), c.points.end(),
                                                 [](const auto& x) { return !x.held_out; })) +
                    " point(s) over " + c.base.name + "'s algorithms: launch " +
                    fixed_text(p.launch_latency * 1e6, 3) + " us, step " +
                    fixed_text(p.step_latency * 1e6, 3) + " us, efficiency " + fixed_text(p.efficiency, 4) +
                    "\n";
  std::snprintf(line, sizeof line, "#%14s %9s %13s %13s %-22s %13s %s\n", "size", "role", "measured(us)",
                "before(us)", "before: algorithm", "after(us)", "after: algorithm");
  out += line;
  for (const CalibratedPoint& x : c.points) {
    std::snprintf(line, sizeof line, "%15llu %9s %13.2f %13.2f %-22s %13.2f %s\n",
                  static_cast<unsigned long long>(x.measured.bytes), x.held_out ? "held-out" : "fitted",
                  x.measured.time_s * 1e6, x.before_s * 1e6, x.before_algorithm.c_str(), x.after_s * 1e6,
                  x.after_algorithm.c_str());
    out += line;
  }
  out += "# geometric-mean error, fitted points: " + fixed_text(100 * c.fit_before, 1) + " % before (" +
         c.base.name + "), " + fixed_text(100 * c.fit_after, 1) + " % after\n";
  if (std::any_of(c.points.begin(), c.points.end(), [](const auto& x) { return x.held_out; }))
    out += "# geometric-mean error, held-out points: " + fixed_text(100 * c.held_before, 1) + " % before, " +
           fixed_text(100 * c.held_after, 1) + " % after\n";
  return out;
}

int run_calibrate(CalibrateArgs& args) {
  check_choice("format", args.format, {"text", "json"});
  for (const std::string& path : args.from) {
    auto points = read_measured_log(path);
    args.request.points.insert(args.request.points.end(), points.begin(), points.end());
  }
  args.request.overrides = split_assignments(args.sets);
  if (!args.hold_out.empty())
    for (const std::string& size : split_items(args.hold_out, ','))
      args.request.held_out.push_back(with_context("--hold-out", [&] { return parse_bytes(size); }));
  // A base stack file read now, as --from is: -o may be neither (a bad one fails before the fit, too).
  if (args.request.base_stack.ends_with(".json")) (void)find_stack(args.request.base_stack);
  std::unique_ptr<OutputFile> file;
  if (!args.output.empty()) file = std::make_unique<OutputFile>(args.output, "stack file");
  const Calibration c = calibrate(args.request);
  if (file) {
    *file << c.fitted.file_text();
    file->close();
  }
  if (args.format == "json") {
    nlohmann::json points = nlohmann::json::array();
    for (const CalibratedPoint& x : c.points)
      points.push_back({{"bytes", x.measured.bytes},
                        {"held_out", x.held_out},
                        {"measured_s", x.measured.time_s},
                        {"before_s", x.before_s},
                        {"before_algorithm", x.before_algorithm},
                        {"after_s", x.after_s},
                        {"after_algorithm", x.after_algorithm},
                        {"source", x.measured.source}});
    nlohmann::json j{{"base", c.base.name},
                     {"fitted", nlohmann::json::parse(c.fitted.file_text())},
                     {"points", points},
                     {"geomean_error",
                      {{"fitted_before", c.fit_before},
                       {"fitted_after", c.fit_after},
                       {"held_out_before", c.held_before},
                       {"held_out_after", c.held_after}}}};
    std::cout << json_text(j, 2) << "\n";
  } else {
    std::cout << printable_text(report_text(c), true);
  }
  return 0;
}

}  // namespace

Command calibrate_command() {
  return {
      "calibrate", "fit a software stack to measured collective times (nccl-tests, nccom-test)",
      [](CLI::App& app) {
        auto args = std::make_shared<CalibrateArgs>();
        CalibrationRequest& r = args->request;
        app.add_option("--topology", r.topology, "the measured system's topology, e.g. hgx-h100")->required();
        app.add_option("--from", args->from,
                       "a measured log: nccl-tests output (text or -J JSON) or nccom-test's (repeatable)")
            ->required();
        app.add_option("--collective", r.collective, "the logs' collective (default allreduce)");
        app.add_option("--algorithm", r.algorithm,
                       "auto (default: the base stack's algorithms, the fastest per size) or one algorithm");
        app.add_option("--stack", r.base_stack,
                       "the base stack: its algorithms, and the 'before' (default: the topology's)");
        app.add_option("--hold-out", args->hold_out, "sizes kept out of the fit and reported apart: 8,1MiB");
        app.add_option("--set", args->sets, "a parameter of the topology or model, name=value (repeatable)");
        app.add_option("-o,--output", args->output,
                       "write the fitted stack to FILE (a stack file: --stack FILE)");
        app.add_option("--format", args->format, "text|json");
        return [args](const std::string&) { return run_calibrate(*args); };
      }};
}

}  // namespace ultrasim
