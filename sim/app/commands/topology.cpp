// `ultrasim topology SPEC`: a topology's summary, or its export as JSON, GraphViz DOT or SimGrid XML.
#include <iostream>
#include <memory>

#include "sim/app/commands/command.hpp"
#include "sim/machine/memory_guard.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/suggest.hpp"
#include "topology/export.hpp"
#include "topology/registry.hpp"
#include "workloads/collective/collective_job.hpp"

namespace ultrasim {
namespace {

struct TopologyArgs {
  std::string spec, format = "summary", output;
  std::vector<std::string> sets;
};

int describe(const TopologyArgs& args) {
  check_choice("format", args.format, {"summary", "json", "dot", "simgrid-xml"});
  Topology topology = make_topology(args.spec, model_params(), split_assignments(args.sets));
  check_memory(topology_memory(topology), "describing " + args.spec);
  std::unique_ptr<OutputFile> out;  // before the export's work: an unwritable path fails fast
  if (!args.output.empty()) out = std::make_unique<OutputFile>(args.output, "output");
  Routes routes(topology);
  // The one export that outgrows the graph: a route per pair of chips (p^2 of them), estimated first.
  if (args.format == "simgrid-xml")
    check_memory(export_memory(topology, simgrid_xml_bytes(topology, routes), "SimGrid XML"),
                 "exporting " + args.spec + " as SimGrid XML");
  std::string text;
  if (args.format == "summary") text = printable_text(topology_summary(topology, routes), true);
  if (args.format == "json") text = json_text(topology_json(topology, routes), 2) + "\n";
  if (args.format == "dot") text = topology_dot(topology);
  if (args.format == "simgrid-xml") text = topology_simgrid_xml(topology, routes);
  if (args.output.empty()) {
    std::cout << text;
  } else {
    *out << text;
    out->close();
  }
  return 0;
}

}  // namespace

Command topology_command() {
  return {"topology", "describe or export a topology", [](CLI::App& app) {
            auto args = std::make_shared<TopologyArgs>();
            app.add_option("spec", args->spec, "NAME[:ARGS], e.g. trn3, switch:16, torus:4x4x4")->required();
            app.add_option("--set", args->sets, "override a parameter, name=value (repeatable)");
            app.add_option("--format", args->format, "summary|json|dot|simgrid-xml");
            app.add_option("-o,--output", args->output, "write to FILE instead of standard output");
            return [args](const std::string&) { return describe(*args); };
          }};
}

}  // namespace ultrasim
