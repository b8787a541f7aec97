// Topology files (`--topology file:PATH`, topology/import.hpp): the project's JSON export or GraphML,
// told apart by the content. Goes the way the command line does (make_topology: the file's own
// parameters, the import, validation) and exports what it built, printed as the product prints JSON
// (json_text: bytes that are not UTF-8, as in a tier named in another encoding, become U+FFFD).
#include "fuzz_common.hpp"
#include "topology/base/input_files.hpp"
#include "topology/export.hpp"
#include "topology/registry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ultrasim;
  const std::string path = fuzz::write_input(fuzz::text_of(data, size), ".topology");
  fuzz::accepts_or_rejects([&] {
    const Topology topology = make_topology("file:" + path, {}, {});
    (void)json_text(topology_graph_json(topology));  // as `ultrasim topology --format json` prints it
    topology_dot(topology);
  });
  return 0;
}
