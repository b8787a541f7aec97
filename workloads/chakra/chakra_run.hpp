// Chakra execution traces as a workload (`ultrasim workload chakra:PREFIX`, "workload": "chakra"): the
// run lives in chakra_run.cpp and registers itself in workloads/registry.cpp; this header declares its
// options once (topology/base/options.hpp), for the workload file's fields and the flags of `ultrasim
// workload chakra:PREFIX`.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "topology/base/options.hpp"
#include "workloads/chakra/chakra_program.hpp"

namespace ultrasim {

struct ChakraConfig {
  std::string trace, topology, engine = "auto", comm_group;
  ChakraOptions options;
  std::vector<std::pair<std::string, std::string>> overrides;
};

// The fields of a "chakra" workload: trace, topology, engine, algorithm, algorithms, process_groups,
// comm_group and the stream options (kChakraFlagOptions are also flags of `workload chakra:PREFIX`).
const OptionTable<ChakraConfig>& chakra_options();
extern const std::vector<std::string> kChakraFlagOptions;

}  // namespace ultrasim
