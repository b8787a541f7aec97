// `ultrasim tune`: tuning tables (the best algorithm per size range) from sweep rows;
// workloads/experiments/tune.hpp has the rules.
#include <iostream>
#include <memory>

#include "sim/analysis/report.hpp"
#include "sim/app/commands/command.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/suggest.hpp"
#include "workloads/experiments/tune.hpp"

namespace ultrasim {
namespace {

struct TuneArgs {
  std::vector<std::string> from;
  std::string format = "text", output;
};

int tune(const TuneArgs& args, const std::string& command_line) {
  check_choice("format", args.format, {"text", "json"});
  std::vector<SweepRow> rows;
  for (std::size_t i = 0; i < args.from.size(); ++i) {
    auto more = read_sweep_rows(args.from[i], static_cast<int>(i));
    rows.insert(rows.end(), more.begin(), more.end());
  }
  std::unique_ptr<OutputFile> file;  // after the inputs are read: -o may not be one of them
  if (!args.output.empty()) file = std::make_unique<OutputFile>(args.output, "output");
  auto tables = build_tuning_tables(rows);
  std::string text = args.format == "json"
                         ? json_text(tuning_json(tables, ultrasim_version(), command_line), 2) + "\n"
                         : printable_text(tuning_text(tables), true);
  if (file) {
    *file << text;
    file->close();
  } else {
    std::cout << text;
  }
  return 0;
}

}  // namespace

Command tune_command() {
  return {"tune", "best algorithm per size range from sweep rows (JSON Lines)", [](CLI::App& app) {
            auto args = std::make_shared<TuneArgs>();
            app.add_option("--from", args->from, "sweep rows, JSON Lines (repeatable)")->required();
            app.add_option("--format", args->format, "text|json");
            app.add_option("-o,--output", args->output, "write to FILE instead of standard output");
            return [args](const std::string& command_line) { return tune(*args, command_line); };
          }};
}

}  // namespace ultrasim
