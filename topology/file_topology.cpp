// file:PATH — a topology read from a file: the JSON that `ultrasim topology SPEC --format json` writes
// (or one written by hand to the same schema, topology/topology.schema.json), or GraphML. See
// topology/import.hpp and topology/README.md, "Your own topology (file:PATH)".
#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "topology/export.hpp"
#include "topology/import.hpp"
#include "topology/registry.hpp"

namespace ultrasim {
namespace {

// The exact bisection of an imported topology, where its file records the spec it was exported from,
// that spec rebuilds with the recorded parameters into exactly this graph, and its generator has a
// formula. An edited file no longer matches: the summary computes a cut instead.
std::optional<double> origin_bisection(const Topology& imported) {
  if (!imported.origin()) return std::nullopt;
  const TopologyOrigin& origin = *imported.origin();
  auto [name, args] = split_topology_spec(origin.spec);
  for (const GeneratorEntry& entry : topology_generators()) {
    if (entry.name != name || entry.name == "file" || !entry.bisection) continue;
    try {
      std::vector<std::pair<std::string, std::string>> recorded;
      for (const auto& [key, value] : origin.parameters.items()) {
        if (value.is_null())
          recorded.emplace_back(key, "inf");
        else if (value.is_string())
          recorded.emplace_back(key, value.get<std::string>());
        else if (value.is_number())
          recorded.emplace_back(key, shortest_number(value.get<double>()));
        else
          recorded.emplace_back(key, value.dump());  // true, false
      }
      ParamSet params(entry.params);
      params.apply_known(recorded);
      Topology rebuilt = entry.build(origin.spec, args, params);
      if (topology_graph_json(rebuilt) != topology_graph_json(imported)) return std::nullopt;
      return entry.bisection(rebuilt);
    } catch (const InputError&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

GeneratorEntry file_generator() {
  GeneratorEntry entry{"file",
                       "file:PATH",
                       "a topology from a file: JSON as `ultrasim topology --format json` writes, or GraphML",
                       {},  // the file's own: extra_params
                       [](const std::string& spec, const std::string& args, const ParamSet& params) {
                         return import_topology(args, spec, params);
                       }};
  entry.extra_params = [](const std::string& args) { return imported_topology_params(args); };
  entry.bisection = origin_bisection;
  return entry;
}

}  // namespace ultrasim
