// The run model: the parameters of the simulation itself (not of a topology), settable with --set like
// any parameter: the software stack and its protocol, what a chip adds to every transfer, how reductions are
// charged, and the routing. build_machine() (program.hpp) makes every topology with them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topology/base/param_table.hpp"
#include "topology/base/params.hpp"
#include "topology/routing.hpp"

namespace ultrasim {

// Parameters of the simulation model itself (not of a topology), settable with --set: the software stack
// and its protocol, the costs a chip adds to a transfer, and the routing.
struct ModelParams {
  std::string stack = "auto", protocol = "auto";
  double transfer_overhead = 0;                 // s, every transfer
  std::optional<double> reduce_bandwidth = {};  // B/s a chip reduces at; nullopt: free
  RoutingParams routing;
};
// Their declarations (optional: a topology made without them reads the defaults above).
const ParamTable<ModelParams>& model_table();
// model_table().specs().
std::vector<ParamSpec> model_params();
// The model parameters in effect on a topology made with model_params().
ModelParams model_of(const ParamSet& params);

}  // namespace ultrasim
