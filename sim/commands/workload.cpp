// `ultrasim workload FILE`: a JSON workload file of any kind the registry has (sim/runs/workloads.hpp); its
// "workload" field names the kind. FILE "-" reads the standard input (as sweep points do).
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "sim/commands/command.hpp"
#include "sim/engine/engines.hpp"
#include "sim/runs/workloads.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/params.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {
namespace {

struct WorkloadArgs {
  std::string file;
  WorkloadOutput output{"", "", ""};  // an empty format: the kind's first
  // chakra:PREFIX only: the words of its workload file.
  std::string topology, algorithm, engine;
  std::vector<std::string> sets, groups;
  std::map<std::string, std::string> fields;  // the flags of kChakraFlags given, by their field
};

// chakra:PREFIX's flags that are its workload file's fields as they are (a number or a string).
struct ChakraFlag {
  const char* flag;
  const char* field;
  const char* help;
  bool number;
};
const ChakraFlag kChakraFlags[] = {
    {"--streams", "streams",
     "chakra:PREFIX: overlap (default: a rank's ready nodes run side by side on their streams, as in "
     "ASTRA-sim) or serial (one node at a time)",
     false},
    {"--comm-streams", "comm_streams",
     "chakra:PREFIX: collectives, sends and memory nodes a rank runs at once (default 1, as ASTRA-sim; "
     "0: no limit)",
     true},
    {"--comm-slowdown", "comm_slowdown",
     "chakra:PREFIX: F, compute started while its rank communicates takes (1 + F) x longer (default 0)",
     true},
    {"--comm-size", "comm_size",
     "chakra:PREFIX: astra-sim (default: an all-gather's comm_size is each rank's input) or nccl-tests "
     "(its whole output)",
     false},
    {"--deps", "deps",
     "chakra:PREFIX: all (default: data and control dependencies) or data (control ones ignored: Chakra's "
     "schema 1.0.1 converter points them at parent operators)",
     false},
    {"--comm-group", "comm_group",
     "chakra:PREFIX: FILE, ASTRA-sim's communicator groups as JSON, {\"1\": [0, 1, 2, 3]}", false}};

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
  for (const ChakraFlag& flag : kChakraFlags) {
    const auto it = args.fields.find(flag.field);
    if (it == args.fields.end()) continue;
    if (!flag.number) {
      w[flag.field] = it->second;
      continue;
    }
    const nlohmann::json number = nlohmann::json::parse(it->second, nullptr, false);
    if (!number.is_number())
      throw InputError(std::string(flag.flag) + ": expected a number, not '" + it->second + "'");
    w[flag.field] = number;
  }
  return w;
}

int run_workload(const WorkloadArgs& args, const std::string& command_line) {
  const bool chakra = args.file.starts_with("chakra:");
  if (!chakra && !(args.topology.empty() && args.algorithm.empty() && args.engine.empty() &&
                   args.sets.empty() && args.groups.empty() && args.fields.empty()))
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
            app.add_option("--engine", args->engine, "chakra:PREFIX: " + engine_choices());
            app.add_option(
                "--process-group", args->groups,
                "chakra:PREFIX: NAME=RANKS (0-7,12), a process group the trace names (repeatable)");
            for (const ChakraFlag& flag : kChakraFlags)
              app.add_option_function<std::string>(
                  flag.flag, [args, field = flag.field](const std::string& v) { args->fields[field] = v; },
                  flag.help);
            return [args](const std::string& command_line) { return run_workload(*args, command_line); };
          }};
}

}  // namespace ultrasim
