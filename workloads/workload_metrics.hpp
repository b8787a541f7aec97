// What every workload reports beside its times, whatever its kind (MoE layer, serving step, training
// step, Chakra trace, jobs): the parameters it runs with, its energy and cost, and the percentiles of its
// latencies. Free of SimGrid.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "topology/base/params.hpp"

namespace ultrasim {

// The parameters a workload runs with: `base` (a topology's, with the model's) and `extra` declared after
// them, each override applied where it is declared.
ParamSet with_params(ParamSet base, const std::vector<ParamSpec>& extra,
                     const std::vector<std::pair<std::string, std::string>>& overrides);

// Energy (J) of a workload that took `seconds` on p chips and `switches` switches and moved `link_bytes`
// over links (each byte counted once per link it crossed), by scope:
//   chips    p x chip_watts x seconds (what a GPU-only meter sees)
//   switches switches x switch_power x seconds;  links  link_energy x 8 x link_bytes
//   hosts    ceil(p / host_chips) x host_power x seconds
//   node     chips + switches + links + hosts (at the wall);  facility  node x pue
struct Energy {
  double chips = 0, switches = 0, links = 0, hosts = 0, pue = 1;
  double node() const { return chips + switches + links + hosts; }
  double facility() const { return node() * pue; }
};
Energy workload_energy(const ParamSet& params, int p, int switches, double seconds, double chip_watts,
                       double link_bytes);
// Its node energy with every chip at chip_power.
double workload_energy_j(const ParamSet& params, int p, int switches, double seconds, double link_bytes);
// Dollars for p chips busy `seconds`: ultraserver_price_per_hour x (p / ultraserver_chips) x seconds / 3600.
double workload_cost_usd(const ParamSet& params, int p, double seconds);

// The p50 / p99 / max of a list of times (nearest rank: the ceil(q n)-th smallest).
double percentile(std::vector<double> values, double q);
// The same of values already sorted (several percentiles of one list sort it once).
double percentile_of_sorted(const std::vector<double>& sorted, double q);

}  // namespace ultrasim
