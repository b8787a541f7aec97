#include "sim/machine/run_model.hpp"

#include <algorithm>

#include "collectives/stack.hpp"

namespace ultrasim {

const ParamTable<ModelParams>& model_table() {
  static const ParamTable<ModelParams> table = [] {
    std::vector<std::string> stacks{"auto"}, protocols{"auto"};
    for (const Stack& stack : builtin_stacks()) {
      stacks.push_back(stack.name);
      for (const Protocol& p : stack.protocols)
        if (std::find(protocols.begin(), protocols.end(), p.name) == protocols.end())
          protocols.push_back(p.name);
    }
    stacks.push_back("FILE.json");
    protocols.push_back("NAME");
    using M = ModelParams;
    return ParamTable<M>{}
        .add_optional(
            {"stack", "auto", Unit::kChoice,
             "the communication library's costs (collectives/stacks/): auto = the topology's default "
             "(its preset's library, ideal for generic fabrics), a built-in name or a stack FILE.json",
             "collectives/stacks/*.json, each number with its source", stacks},
            &M::stack)
        .add_optional(
            {"protocol", "auto", Unit::kChoice,
             "the stack's protocol; auto: per collective, the one whose model_s is lowest at its size "
             "(as NCCL's tuner picks); elsewhere the stack's bulk protocol (highest efficiency)",
             "the stack file", protocols},
            &M::protocol)
        .add_optional({"transfer_overhead", "0", Unit::kTime,
                       "fixed software/DMA cost added to every transfer, on top of the stack's step latency",
                       "calibration knob; 0 = pure fabric"},
                      &M::transfer_overhead)
        .add_optional({"reduce_bandwidth", "inf", Unit::kOptRate,
                       "rate at which a chip reduces received data (bytes / rate of chip time per reduction)",
                       "hardware.md [AWS]: reductions ride the DMA at full rate, so free by default"},
                      &M::reduce_bandwidth)
        .nest(routing_table(), &M::routing);
  }();
  return table;
}

std::vector<ParamSpec> model_params() {
  return model_table().specs();
}

ModelParams model_of(const ParamSet& params) {
  return model_table().read(params);
}

}  // namespace ultrasim
