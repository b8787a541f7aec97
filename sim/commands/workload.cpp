// `ultrasim workload FILE`: a JSON workload file of any kind the registry has (sim/runs/workloads.hpp); its
// "workload" field names the kind. FILE "-" reads the standard input (as sweep points do).
#include <iostream>
#include <memory>
#include <sstream>

#include "sim/commands/command.hpp"
#include "sim/runs/workloads.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/suggest.hpp"

namespace ultrasim {
namespace {

struct WorkloadArgs {
  std::string file;
  WorkloadOutput output{"", "", ""};  // an empty format: the kind's first
};

int run_workload(const WorkloadArgs& args, const std::string& command_line) {
  std::string text;
  if (args.file == "-") {
    std::stringstream in;
    in << std::cin.rdbuf();
    text = in.str();
  } else {
    text = read_input_file(args.file, "workload file '" + args.file + "'", "a JSON workload object");
  }
  nlohmann::json w;
  try {
    w = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw InputError("workload file '" + args.file + "': " + json_error_text(e));
  }
  const WorkloadKind& kind = workload_kind_of(w, args.file);
  WorkloadOutput output = args.output;
  output.command = command_line;
  if (output.format.empty()) output.format = kind.formats.front();
  check_choice("format", output.format, kind.formats);
  return kind.run(w, args.file, output);
}

}  // namespace

Command workload_command() {
  return {"workload", "run a workload file of any kind (ultrasim list workloads)", [](CLI::App& app) {
            auto args = std::make_shared<WorkloadArgs>();
            app.add_option("file", args->file, "the workload file, or - for standard input")->required();
            app.add_option("--format", args->output.format,
                           "table|json, and csv for a collective (default table)");
            app.add_option("--trace", args->output.trace, "write a Perfetto trace to FILE");
            return [args](const std::string& command_line) { return run_workload(*args, command_line); };
          }};
}

}  // namespace ultrasim
