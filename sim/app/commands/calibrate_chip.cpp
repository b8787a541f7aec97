// `ultrasim calibrate-chip`: fits a chip profile's efficiencies and fixed costs to measured kernel times
// (CSV, JSON or a PyTorch profiler trace) and writes a profile file that `serve --chip FILE` reads
// (workloads/serving/chip_fit.hpp has the fit).
#include <cstdio>
#include <iostream>
#include <memory>

#include "sim/app/commands/command.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "workloads/serving/chip_fit.hpp"

namespace ultrasim {
namespace {

struct CalibrateChipArgs {
  std::string chip = "h100", output, format = "text";
  std::vector<std::string> from, tables, sets;
  int hold_out_every = 0;
};

std::string shape_text(const KernelPoint& p) {
  const ChipWork& w = p.work;
  return p.operation + " " + fixed_text(w.flops() / 1e9, 3) + " GFLOP " + fixed_text(w.bytes / 1e6, 3) +
         " MB" + (w.gemm_flops > 0 ? " M=" + fixed_text(w.rows, 0) : "");
}

std::string report_text(const ChipFit& f) {
  std::string out = "# " + f.fitted.name + ": fitted";
  for (const auto& name : f.parameters)
    for (const ChipValue& v : f.fitted.values)
      if (v.name == name) out += " " + name + "=" + v.value;
  out += "\n";
  char line[320];
  std::snprintf(line, sizeof line, "#%-48s %9s %13s %13s %13s\n", "point", "role", "measured(us)",
                "before(us)", "after(us)");
  out += line;
  for (const ChipFitPoint& x : f.points) {
    std::snprintf(line, sizeof line, " %-48s %9s %13.2f %13.2f %13.2f\n", shape_text(x.point).c_str(),
                  x.point.held_out ? "held-out" : "fitted", x.point.seconds * 1e6, x.before_s * 1e6,
                  x.after_s * 1e6);
    out += line;
  }
  out += "# geometric-mean error, fitted points: " + fixed_text(100 * f.fit_before, 1) + " % before (" +
         f.base.name + "), " + fixed_text(100 * f.fit_after, 1) + " % after\n";
  if (std::any_of(f.points.begin(), f.points.end(), [](const auto& x) { return x.point.held_out; }))
    out += "# geometric-mean error, held-out points: " + fixed_text(100 * f.held_before, 1) + " % before, " +
           fixed_text(100 * f.held_after, 1) + " % after\n";
  return out;
}

int run_calibrate_chip(CalibrateChipArgs& args) {
  check_choice("format", args.format, {"text", "json"});
  if (args.hold_out_every < 0 || args.hold_out_every > 1000000)
    throw InputError("--hold-out-every must be between 0 and 1000000");
  const ChipProfile base = chip_profile(args.chip, "");
  std::vector<KernelPoint> points;
  std::string from;
  std::vector<KernelRow> table_rows;  // kept in the profile as its kernel tables, and fitted on as points
  for (const std::string& path : args.tables) {
    auto rows = read_kernel_rows(path);
    table_rows.insert(table_rows.end(), rows.begin(), rows.end());
  }
  if (!table_rows.empty()) KernelTables check(table_rows);  // sorted, no shape twice
  if (args.from.empty() && args.tables.empty())
    throw InputError("calibrate-chip: give --from (kernel times to fit on) or --tables (kernel tables)");
  std::vector<std::string> sources = args.from;
  sources.insert(sources.end(), args.tables.begin(), args.tables.end());
  for (const std::string& path : sources) {
    auto more = read_kernel_points(path);
    points.insert(points.end(), more.begin(), more.end());
    from += (from.empty() ? "" : ", ") + path;
  }
  std::unique_ptr<OutputFile> file;
  if (!args.output.empty()) file = std::make_unique<OutputFile>(args.output, "chip profile");
  ChipFit f = fit_chip(base, points, args.hold_out_every, split_assignments(args.sets), from);
  f.fitted.tables = table_rows;
  if (file) {
    *file << json_text(chip_profile_json(f.fitted), 2) << "\n";
    file->close();
  }
  if (args.format == "json") {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const ChipFitPoint& x : f.points)
      rows.push_back({{"operation", x.point.operation},
                      {"flops", x.point.work.flops()},
                      {"bytes", x.point.work.bytes},
                      {"rows", x.point.work.rows},
                      {"held_out", x.point.held_out},
                      {"measured_s", x.point.seconds},
                      {"before_s", x.before_s},
                      {"after_s", x.after_s},
                      {"source", x.point.source}});
    nlohmann::ordered_json j{{"base", f.base.name},
                             {"parameters", f.parameters},
                             {"fitted", chip_profile_json(f.fitted)},
                             {"points", rows},
                             {"geomean_error",
                              {{"fitted_before", f.fit_before},
                               {"fitted_after", f.fit_after},
                               {"held_out_before", f.held_before},
                               {"held_out_after", f.held_after}}}};
    std::cout << json_text(j, 2) << "\n";
  } else {
    std::cout << printable_text(report_text(f), true);
  }
  return 0;
}

}  // namespace

Command calibrate_chip_command() {
  return {
      "calibrate-chip",
      "fit a chip profile's efficiencies and fixed costs to measured kernel times (CSV, JSON, Kineto)",
      [](CLI::App& app) {
        auto args = std::make_shared<CalibrateChipArgs>();
        app.add_option("--chip", args->chip,
                       "the base profile: its peaks and what the points do not inform (default h100)");
        app.add_option("--from", args->from,
                       "measured kernel times: CSV, JSON array or PyTorch profiler trace (repeatable)");
        app.add_option("--tables", args->tables,
                       "kernel tables by shape (CSV or JSON array, sim/machine/kernel_tables.hpp): kept in "
                       "the written profile, and fitted on as points (repeatable)");
        app.add_option("--hold-out-every", args->hold_out_every,
                       "hold out every Nth point (besides rows with role held-out); 0: none");
        app.add_option("--set", args->sets, "a chip parameter of the base, name=value (repeatable)");
        app.add_option("-o,--output", args->output, "write the fitted profile to FILE (serve --chip FILE)");
        app.add_option("--format", args->format, "text|json");
        return [args](const std::string&) { return run_calibrate_chip(*args); };
      }};
}

}  // namespace ultrasim
