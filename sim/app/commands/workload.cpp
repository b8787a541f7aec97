// `ultrasim workload FILE`: a JSON workload file of any kind the registry has (workloads/registry.hpp); its
// "workload" field names the kind. FILE "-" reads the standard input (as sweep points do).
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "sim/app/commands/command.hpp"
#include "sim/app/commands/declared_options.hpp"
#include "sim/engines/engines.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/params.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "workloads/chakra/chakra_run.hpp"
#include "workloads/registry.hpp"

namespace ultrasim {
namespace {

struct WorkloadArgs {
  std::string file;
  WorkloadOutput output{"", "", ""};  // an empty format: the kind's first
  // chakra:PREFIX only: the words of its workload file.
  std::string topology, algorithm, engine;
  std::vector<std::string> sets, groups;
  DeclaredFlags<ChakraConfig> flags;  // kChakraFlagOptions: the fields as they are
};

// `chakra:PREFIX --topology T ...` as the "chakra" workload object its flags describe.
nlohmann::json chakra_workload_of(const WorkloadArgs& args) {
  if (args.topology.empty()) throw InputError("chakra:PREFIX needs --topology (the fabric its ranks run on)");
  nlohmann::json w{{"workload", "chakra"}, {"trace", args.file.substr(7)}, {"topology", args.topology}};
  if (!args.engine.empty()) w["engine"] = args.engine;
  for (const std::string& item : split_items(args.algorithm, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      w["algorithm"] = item;
    else
      w["algorithms"][item.substr(0, eq)] = item.substr(eq + 1);
  }
  for (const auto& [name, value] : split_assignments(args.sets)) w["set"][name] = value;
  for (const auto& [name, ranks] : split_assignments(args.groups)) w["process_groups"][name] = ranks;
  ChakraConfig checked;  // the flags read as flags first, so an error names the flag, not the field
  args.flags.apply(checked);
  args.flags.put_given(w);
  return w;
}

int run_workload(const WorkloadArgs& args, const std::string& command_line) {
  const bool chakra = args.file.starts_with("chakra:");
  if (!chakra && !(args.topology.empty() && args.algorithm.empty() && args.engine.empty() &&
                   args.sets.empty() && args.groups.empty() && args.flags.given().empty()))
    throw InputError(
        "--topology, --algorithm, --set, --engine, --process-group, --comm-group and the stream options go "
        "with chakra:PREFIX; a workload file holds its own");
  std::string text;
  if (chakra) {
    text = chakra_workload_of(args).dump();
  } else if (args.file == "-") {
    text = read_input_stream(std::cin, "workload file '-' (standard input)");
  } else {
    text = read_input_file(args.file, "workload file '" + args.file + "'", "a JSON workload object");
  }
  nlohmann::json w;
  try {
    w = parse_json_input(text, "workload file '" + args.file + "'");
  } catch (const InputError&) {
    throw;  // already names the file
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
            app.add_option("--topology", args->topology, "chakra:PREFIX: the topology its ranks run on");
            app.add_option("--algorithm", args->algorithm,
                           "chakra:PREFIX: auto (default), or COLLECTIVE=ALGORITHM,... per collective");
            app.add_option("--set", args->sets, "chakra:PREFIX: NAME=VALUE, a parameter (repeatable)");
            add_stack_option(app, args->sets, "chakra:PREFIX: software stack (as --set stack=NAME)");
            app.add_option("--engine", args->engine,
                           "chakra:PREFIX: " +
                               engine_help("contention-free where it proves exact, else flow, else SimGrid"));
            app.add_option(
                "--process-group", args->groups,
                "chakra:PREFIX: NAME=RANKS (0-7,12), a process group the trace names (repeatable)");
            args->flags.add(app, chakra_options(), kChakraFlagOptions);
            return [args](const std::string& command_line) { return run_workload(*args, command_line); };
          }};
}

}  // namespace ultrasim
