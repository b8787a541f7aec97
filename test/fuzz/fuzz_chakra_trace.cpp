// Chakra execution traces (`ultrasim workload chakra:PREFIX`, workloads/chakra/chakra_trace.hpp): one rank's
// file, read and then run through the program's checks as both ranks of a 2-chip trace (dependencies ordered,
// peers and process groups checked, collectives matched and their algorithms chosen on switch:2).
#include <vector>

#include "fuzz_common.hpp"
#include "sim/machine/chip_model.hpp"
#include "workloads/chakra/chakra_program.hpp"
#include "workloads/chakra/chakra_trace.hpp"
#include "workloads/collective/collective_job.hpp"
#include "workloads/workload_metrics.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ultrasim;
  const std::string path = fuzz::write_input(fuzz::text_of(data, size), ".et");
  fuzz::accepts_or_rejects([&] {
    const ChakraRank rank = read_chakra_rank(path, 1 << 20);
    static const Machine machine = build_machine("switch:2", {}, {}, true);
    std::vector<const AlgorithmEntry*> every;
    for (const AlgorithmEntry& entry : algorithms()) every.push_back(&entry);
    ParamSet extra(chip_params());
    extra.declare(algorithm_params(every));
    const ParamSet params = with_params(machine.topology->params(), extra.specs(), {});
    ChakraStep({rank, rank}, machine, params, ChakraOptions{});  // verdict() needs a run: not here
  });
  return 0;
}
