// Topology specs and `--set` overrides (topology/registry.hpp make_topology): the first line is the spec
// (`--topology`), every further line one `--set name=value`. What builds must validate and export.
//
// Inputs whose spec or count parameters could build more than a few thousand chips are skipped
// (fuzz::small_numbers); `file:` specs (a path) belong to fuzz_topology_import.
#include "fuzz_common.hpp"
#include "topology/base/units.hpp"
#include "topology/export.hpp"
#include "topology/registry.hpp"

using namespace ultrasim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto lines = fuzz::lines_of(fuzz::text_of(data, size));
  const std::string& spec = lines[0];
  if (spec.rfind("file", 0) == 0 || !fuzz::small_numbers(spec)) return 0;
  fuzz::accepts_or_rejects([&] {
    std::vector<std::pair<std::string, std::string>> overrides;
    for (std::size_t i = 1; i < lines.size(); ++i) overrides.push_back(split_assignment(lines[i]));
    // Count parameters multiply the size like the spec's numbers do.
    std::string counts = spec;
    for (const ParamSpec& param : generator_params(spec))
      for (const auto& [name, value] : overrides)
        if (name == param.name && (param.unit == Unit::kCount || param.unit == Unit::kChoice))
          counts += " " + value;
    if (!fuzz::small_numbers(counts)) return;
    const Topology topology = make_topology(spec, {}, overrides);
    topology_graph_json(topology).dump();
    topology_dot(topology);
    topology.params().to_json().dump();
  });
  return 0;
}
