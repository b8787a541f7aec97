#include "workloads/serving/arrival_deployment.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "sim/machine/chip_model.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "workloads/serving/serving_run.hpp"

namespace ultrasim {
namespace {

// Blocks of 16 tokens a group's chips hold beside the heaviest chip's weights, within kv_fraction of HBM.
std::uint64_t kv_blocks_of(const ProductionConfig& config, const ServingStepper& s, const std::string& pool) {
  if (config.kv_blocks > 0) return config.kv_blocks;
  const ServingConfig& c = s.config();
  const MemoryUse use = memory_use(c, s.layout(), s.params(), 1);
  const double free = use.capacity * config.kv_fraction - use.weights;
  const double kv_split = c.model.kv_split(s.layout().tp);
  const double per_block = 16 * c.model.kv_bytes_per_token() * c.model.layers / kv_split;
  auto gib = [](double b) { return fixed_text(b / (1024.0 * 1024 * 1024), 1) + " GiB"; };
  if (free < per_block)
    throw InputError("the " + pool + " pool's layout does not fit: " + gib(use.weights) +
                     " of weights per chip, " + fixed_text(config.kv_fraction * 100, 0) + " % of HBM is " +
                     gib(use.capacity * config.kv_fraction) +
                     " (more chips, --tp, or a smaller --weight-dtype)");
  return static_cast<std::uint64_t>(std::floor(free / per_block));
}

std::string pool_topology(const std::string& topology, int first, int last) {
  return topology + "@" + std::to_string(first) + "-" + std::to_string(last);
}

// The pools of the run: one, or prefill and decode, each a part of `fabric` (the whole topology's
// machine, for the split).
std::vector<PoolSim> make_pools(const ProductionConfig& config, const Machine* fabric) {
  std::vector<PoolSim> pools;
  auto add = [&](const std::string& name, ServingConfig c, int first, int last) {
    PoolSim& p = pools.emplace_back();
    p.name = name, p.first_chip = first;
    std::unique_ptr<Machine> part;
    if (fabric) part = std::make_unique<Machine>(select_chips(*fabric, first, last, true));
    p.stepper = std::make_unique<ServingStepper>(c, config.exact_steps, config.grid_layers, config.grid_cache,
                                                 std::move(part));
    p.kv_blocks = kv_blocks_of(config, *p.stepper, name);
  };
  if (scheduler_entry(config.scheduler).pools == 1) {
    add("pool", config.serving, 0, -1);
    return pools;
  }
  const int chips = fabric->p();
  const int P = config.prefill_chips > 0
                    ? config.prefill_chips
                    : std::max(1, static_cast<int>(std::lround(config.prefill_share * chips)));
  if (P >= chips)
    throw InputError("the prefill pool's " + std::to_string(P) +
                     " chips leave no decode chips of the topology's " + std::to_string(chips));
  if (config.serving.topology.find('@') != std::string::npos)
    throw InputError("--scheduler disaggregated splits the topology's chips: give a topology without @CHIPS");
  ServingConfig prefill = config.serving, decode = config.serving;
  prefill.topology = pool_topology(config.serving.topology, 0, P - 1);
  prefill.tp = config.prefill_tp > 0 ? config.prefill_tp : config.serving.tp;
  decode.topology = pool_topology(config.serving.topology, P, chips - 1);
  with_context("the prefill pool", [&] {
    add("prefill", prefill, 0, P - 1);
    return 0;
  });
  with_context("the decode pool", [&] {
    add("decode", decode, P, chips - 1);
    return 0;
  });
  return pools;
}

// The pools as the schedulers see them: each iteration priced by its stepper, and what it spent kept.
std::vector<ServingPool> pool_views(std::vector<PoolSim>& pools) {
  std::vector<ServingPool> views;
  for (PoolSim& p : pools) {
    ServingPool& v = views.emplace_back();
    v.name = p.name, v.groups = p.stepper->layout().dp, v.kv_blocks = p.kv_blocks;
    v.step = [&p](const std::vector<StepItem>& items) {
      const ServingStepper::Step s = p.stepper->step(items);
      p.busy_s += s.seconds, p.flops += s.flops, p.link_bytes += s.link_bytes;
      const double joules = p.stepper->layout().chips * s.chip_watts * s.seconds;
      p.busy_chip_j += joules;
      p.step_chip_j.push_back(joules);
      p.balance_s += s.attention_balance * s.seconds;
      if (s.wrong > 0 && p.wrong == 0) p.first_error = s.first_error;
      p.wrong += s.wrong;
      return s.seconds;
    };
  }
  return views;
}

// A prefill iteration's KV moves as one exchange on the whole fabric, alone: decode chip t of the target
// group gets its shard (the whole latent with MLA) from chip t mod tp of the source group.
std::function<double(const std::vector<KvMove>&)> kv_transfer(std::vector<PoolSim>& pools,
                                                              ServingStepper& fabric, double& bytes_moved) {
  return [&pools, &fabric, &bytes_moved](const std::vector<KvMove>& moves) {
    const int chips = fabric.layout().chips;
    const ServingLayout &from = pools[0].stepper->layout(), &to = pools[1].stepper->layout();
    const ModelShape& m = pools[1].stepper->config().model;
    const int split = m.kv_split(to.tp);
    std::vector<std::vector<std::uint64_t>> rows(chips, std::vector<std::uint64_t>(chips, 0));
    for (const KvMove& mv : moves)
      for (int t = 0; t < to.tp; ++t) {
        const int src = pools[0].first_chip + mv.from_group * from.tp + t % from.tp;
        const int dst = pools[1].first_chip + mv.to_group * to.tp + t;
        const auto bytes = static_cast<std::uint64_t>(
            std::ceil(static_cast<double>(mv.tokens) * m.kv_bytes_per_token() * m.layers / split));
        rows[src][dst] += bytes, bytes_moved += static_cast<double>(bytes);
      }
    const ServingStepper::Step s = fabric.exchange(rows);
    pools[0].link_bytes += s.link_bytes;
    return s.seconds;
  };
}

}  // namespace

ArrivalDeployment::ArrivalDeployment(const ProductionConfig& config) : config_(config) {
  config_.validate();
  if (scheduler_entry(config_.scheduler).pools == 2) {
    ServingConfig whole = config_.serving;
    whole.tp = 1;
    fabric_ = std::make_unique<ServingStepper>(whole, true, 1);
  }
  pools_ = make_pools(config_, fabric_ ? &fabric_->machine() : nullptr);
  views_ = pool_views(pools_);
  options_ = config_.options;
  if (fabric_) options_.transfer = kv_transfer(pools_, *fabric_, transfer_bytes_);
}

int ArrivalDeployment::chips() const {
  return fabric_ ? fabric_->layout().chips : pools_.front().stepper->layout().chips;
}

ServingSchedule ArrivalDeployment::serve(const std::vector<ServingRequest>& requests, Progress* progress) {
  for (PoolSim& p : pools_) {
    p.busy_s = p.flops = p.link_bytes = p.busy_chip_j = p.balance_s = 0;
    p.step_chip_j.clear();
    p.wrong = 0, p.first_error.clear();
  }
  transfer_bytes_ = 0;
  SchedulerOptions options = options_;
  options.progress = progress;
  return scheduler_entry(config_.scheduler).run(requests, views_, options);
}

// Per pool: its chips, layout, KV and how busy it was; its energy (its chips at each step's power while
// stepping, idle otherwise; its switches and hosts the whole duration) and cost over `duration` added up.
nlohmann::ordered_json pools_json(const ArrivalDeployment& d, const ServingSchedule& schedule,
                                  double duration, Energy& energy, double& cost) {
  using json = nlohmann::ordered_json;
  const std::vector<PoolSim>& pools = d.pools();
  json pool_rows = json::array();
  for (const PoolSim& p : pools) {
    const ServingStepper& s = *p.stepper;
    const ServingLayout& l = s.layout();
    const double peak = chip_of(s.params()).chip_flops;
    std::uint64_t iterations = 0, batch_sum = 0, kv_most = 0;
    for (const ServingIteration& it : schedule.iterations)
      if (&pools[static_cast<std::size_t>(it.pool)] == &p)
        ++iterations, batch_sum += it.requests, kv_most = std::max(kv_most, it.kv_blocks);
    json row;
    row["pool"] = p.name;
    row["chips"] = l.chips;
    row["first_chip"] = p.first_chip;
    row["layout"] = {{"tp", l.tp}, {"dp", l.dp}, {"ep", l.ep}};
    row["kv_blocks_per_group"] = p.kv_blocks;
    row["iterations"] = iterations;
    row["mean_batch"] =
        iterations > 0 ? static_cast<double>(batch_sum) / static_cast<double>(iterations) : 0.0;
    row["max_kv_use"] = static_cast<double>(kv_most) / (static_cast<double>(p.kv_blocks) * l.dp);
    row["busy_fraction"] = duration > 0 ? p.busy_s / duration : 0.0;
    row["attention_balance"] = p.busy_s > 0 ? p.balance_s / p.busy_s : 1.0;
    row["mfu"] = duration > 0 ? p.flops / (duration * l.chips * peak) : 0.0;
    row["grid_points"] = s.grid_points();
    row["engine"] = s.engine();
    pool_rows.push_back(row);
    Energy e = workload_energy(s.params(), l.chips, s.switches(), duration, 0, p.link_bytes);
    e.chips =
        p.busy_chip_j + l.chips * idle_power_w(chip_of(s.params())) * std::max(duration - p.busy_s, 0.0);
    energy.chips += e.chips, energy.switches += e.switches, energy.links += e.links, energy.hosts += e.hosts;
    energy.pue = e.pue;
    cost += workload_cost_usd(s.params(), l.chips, duration);
  }
  return pool_rows;
}

Energy window_energy(const ArrivalDeployment& d, const ServingSchedule& schedule, double t0, double t1) {
  Energy energy;
  const double length = std::max(t1 - t0, 0.0);
  double duration = 0;
  for (const ServingIteration& it : schedule.iterations) duration = std::max(duration, it.end_s);
  for (std::size_t i = 0; i < d.pools().size(); ++i) {
    const PoolSim& p = d.pools()[i];
    const ServingStepper& s = *p.stepper;
    const int chips = s.layout().chips;
    double busy = 0, busy_j = 0;
    std::size_t k = 0;  // the pool's k-th iteration is its k-th step
    for (const ServingIteration& it : schedule.iterations) {
      if (it.pool != static_cast<int>(i)) continue;
      const double seconds = it.end_s - it.start_s;
      const double inside = std::max(0.0, std::min(it.end_s, t1) - std::max(it.start_s, t0));
      if (inside > 0 && seconds > 0 && k < p.step_chip_j.size())
        busy += inside, busy_j += p.step_chip_j[k] * inside / seconds;
      ++k;
    }
    const double links = duration > 0 ? p.link_bytes * length / duration : 0;
    const Energy e = workload_energy(s.params(), chips, s.switches(), length, 0, links);
    energy.chips += busy_j + chips * idle_power_w(chip_of(s.params())) * std::max(length - busy, 0.0);
    energy.switches += e.switches, energy.links += e.links, energy.hosts += e.hosts, energy.pue = e.pue;
  }
  return energy;
}

}  // namespace ultrasim
