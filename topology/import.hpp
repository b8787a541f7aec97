// Reading a topology from a file (`--topology file:PATH`): the project's own JSON export
// (`ultrasim topology SPEC --format json`) or GraphML, read with Boost.Graph's read_graphml. The format
// is told by the content (a JSON object or XML), not the file name. Both are read into one neutral
// description, checked, and built in file order, so a JSON export imported and exported again is
// byte-identical and simulates identically. The schemas: topology/topology.schema.json and
// topology/README.md, "Your own topology (file:PATH)".
#pragma once

#include <string>
#include <vector>

#include "topology/base/params.hpp"
#include "topology/topology.hpp"

namespace ultrasim {

// The topology the file at `path` describes, with `spec` ("file:PATH") and `params` (the parameters in
// effect) stored in it. Throws InputError "PATH: <element>: <what was expected>" on a missing or
// unreadable file, malformed JSON or GraphML, an unknown field, kind, tier or node, a duplicate name or
// rank, ranks that are not 0..p-1 (or given for some chips only), a bad unit or out-of-range value.
// Connectivity is left to Topology::validate() (make_topology calls it).
Topology import_topology(const std::string& path, const std::string& spec, const ParamSet& params);

// The parameters an imported topology declares itself: switch_reduction and switch_reduce_bandwidth (what
// its switches can do), defaulting to the values the file records (JSON "parameters", GraphML graph
// data) or else to a generic switch's (also for an empty path). A JSON file with a "parameters" object
// (an export) declares only those of the two it lists, as its generator did. Throws InputError like
// import_topology.
std::vector<ParamSpec> imported_topology_params(const std::string& path);

}  // namespace ultrasim
