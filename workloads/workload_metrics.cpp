#include "workloads/workload_metrics.hpp"

#include <algorithm>
#include <cmath>

#include "sim/machine/chip_model.hpp"

namespace ultrasim {

ParamSet with_params(ParamSet base, const std::vector<ParamSpec>& extra,
                     const std::vector<std::pair<std::string, std::string>>& overrides) {
  base.declare(extra);
  base.apply_known(overrides);
  return base;
}

Energy workload_energy(const ParamSet& params, int p, int switches, double seconds, double chip_watts,
                       double link_bytes) {
  const ChipParams c = chip_of(params);
  const int hosts = (p + c.host_chips - 1) / c.host_chips;
  return {p * chip_watts * seconds, switches * c.switch_power * seconds,
          c.link_energy * 1e-12 * 8 * link_bytes, hosts * c.host_power * seconds, c.pue};
}

double workload_energy_j(const ParamSet& params, int p, int switches, double seconds, double link_bytes) {
  return workload_energy(params, p, switches, seconds, chip_of(params).chip_power, link_bytes).node();
}

double workload_cost_usd(const ParamSet& params, int p, double seconds) {
  const ChipParams c = chip_of(params);
  return c.ultraserver_price_per_hour * (p / static_cast<double>(c.ultraserver_chips)) * seconds / 3600;
}

double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return percentile_of_sorted(values, q);
}

double percentile_of_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size()) - 1e-9));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace ultrasim
