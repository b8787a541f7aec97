#include "workloads/training/training.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "collectives/chip.hpp"
#include "collectives/group_transport.hpp"
#include "sim/machine/chip_model.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "workloads/collective/collective_job.hpp"
#include "workloads/collective/groups.hpp"
#include "workloads/workload_file.hpp"

namespace ultrasim {
namespace {

constexpr int kStepsPerCollective = 1 << 20;  // step labels of collective k start at k x 2^20

std::uint64_t bytes_field(const nlohmann::json& v, const std::string& where) {
  if (v.is_string()) return with_context(where, [&] { return parse_bytes(v.get<std::string>()); });
  if (v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0))
    return with_context(where, [&] { return checked_bytes(v.get<std::uint64_t>()); });
  throw InputError(where + " must be a byte count (a number or a size such as \"16MiB\")");
}

StageCollective collective_of(const nlohmann::json& c, const std::string& where, bool p2p) {
  check_known_fields(c,
                     p2p ? std::vector<std::string>{"groups", "size"}
                         : std::vector<std::string>{"collective", "algorithm", "groups", "size"},
                     where);
  StageCollective out;
  for (const char* key : {"collective", "algorithm", "groups"}) {
    if (!c.contains(key)) continue;
    if (!c[key].is_string()) throw InputError(where + "." + key + " must be a string");
    (std::string(key) == "collective"  ? out.collective
     : std::string(key) == "algorithm" ? out.algorithm
                                       : out.groups) = c[key].get<std::string>();
  }
  if (!p2p && out.collective.empty()) throw InputError(where + ": missing field 'collective'");
  if (out.collective == "alltoallv")
    throw InputError(where + ": alltoallv needs a matrix; use alltoall in training steps");
  if (out.groups.empty()) throw InputError(where + ": missing field 'groups' (a --groups spec, e.g. \"dp\")");
  if (!c.contains("size")) throw InputError(where + ": missing field 'size'");
  out.bytes = bytes_field(c["size"], where + ".size");
  return out;
}

}  // namespace

TrainingConfig training_config_from_json(const nlohmann::json& w, const std::string& file) {
  const std::string where = "workload file '" + file + "'";
  check_known_fields(w,
                     {"workload", "description", "topology", "layout", "iterations", "tokens_per_step",
                      "model_flops", "stages", "set"},
                     where);
  TrainingConfig c;
  for (const char* key : {"topology", "layout"})
    if (w.contains(key)) {
      if (!w[key].is_string()) throw InputError(where + ": field '" + key + "' must be a string");
      (std::string(key) == "topology" ? c.topology : c.layout) = w[key].get<std::string>();
    }
  if (w.contains("iterations")) {
    const auto& v = w["iterations"];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > 1000)
      throw InputError(where + ": field 'iterations' must be an integer from 1 to 1000");
    c.iterations = v.get<int>();
  }
  for (const char* key : {"tokens_per_step", "model_flops"})
    if (w.contains(key)) {
      if (!w[key].is_number() || !(w[key].get<double>() > 0))
        throw InputError(where + ": field '" + key + "' must be a number > 0");
      (std::string(key) == "model_flops" ? c.model_flops : c.tokens_per_step) = w[key].get<double>();
    }
  if (!w.contains("stages") || !w["stages"].is_array() || w["stages"].empty())
    throw InputError(where + ": field 'stages' must be a non-empty array of stages");
  for (std::size_t i = 0; i < w["stages"].size(); ++i) {
    const auto& s = w["stages"][i];
    const std::string at = where + ": stages[" + std::to_string(i) + "]";
    check_known_fields(s, {"name", "compute_s", "compute_flops", "collectives", "p2p"}, at);
    TrainingStage stage;
    stage.name = s.contains("name") && s["name"].is_string() ? s["name"].get<std::string>()
                                                             : "stage " + std::to_string(i);
    if (s.contains("compute_s") && s.contains("compute_flops"))
      throw InputError(at + ": give compute_s or compute_flops, not both");
    if (s.contains("compute_s")) {
      if (s["compute_s"].is_string()) {
        stage.compute_s = parse_time(s["compute_s"].get<std::string>());
      } else if (s["compute_s"].is_number() && s["compute_s"].get<double>() >= 0 &&
                 s["compute_s"].get<double>() <= kMaxTime) {
        stage.compute_s = s["compute_s"].get<double>();
      } else {
        throw InputError(at + ".compute_s must be a time from 0 to 1e6 s (seconds, or \"2ms\")");
      }
    }
    if (s.contains("compute_flops")) {
      if (!s["compute_flops"].is_number() || !(s["compute_flops"].get<double>() >= 0) ||
          !std::isfinite(s["compute_flops"].get<double>()))
        throw InputError(at + ".compute_flops must be a number >= 0");
      stage.compute_flops = s["compute_flops"].get<double>();
    }
    if (s.contains("collectives")) {
      if (!s["collectives"].is_array()) throw InputError(at + ".collectives must be an array");
      for (std::size_t k = 0; k < s["collectives"].size(); ++k)
        stage.collectives.push_back(
            collective_of(s["collectives"][k], at + ".collectives[" + std::to_string(k) + "]", false));
    }
    if (s.contains("p2p")) stage.p2p = collective_of(s["p2p"], at + ".p2p", true);
    c.stages.push_back(std::move(stage));
  }
  c.overrides = set_overrides(w, where);
  return c;
}

TrainingStep::TrainingStep(const TrainingConfig& config, const Topology& topology, const ParamSet& params)
    : config_(config), chips_(topology.chip_count()), reduce_rate_(model_of(params).reduce_bandwidth) {
  const ChipParams chip = chip_of(params);
  const double rate = chip.chip_flops * chip.compute_efficiency;
  // The layout must fit the chips whether or not a stage's groups name one of its axes (as run --layout).
  if (!config.layout.empty()) parse_layout(config.layout, chips_);
  stage_collectives_.resize(config.stages.size());
  for (std::size_t s = 0; s < config.stages.size(); ++s) {
    const TrainingStage& stage = config.stages[s];
    compute_s_.push_back(stage.compute_s + stage.compute_flops / rate);
    if (compute_s_.back() > kMaxTime)  // FLOPs at chip_flops: a time past any one can print exactly
      throw InputError(
          "training stage '" + stage.name + "' computes for " + shortest_number(compute_s_.back()) +
          " s, over the limit of 1e6 s of a time (compute_flops / (chip_flops x compute_efficiency))");
    auto add = [&](const StageCollective& c, bool p2p) {
      ResolvedCollective r;
      r.stage = static_cast<int>(s);
      r.p2p = p2p;
      r.bytes = c.bytes;
      r.groups = resolve_groups(c.groups, config.layout, topology);
      if (r.groups.members.empty())
        throw InputError("stage '" + stage.name + "': groups '" + c.groups + "' give no group");
      if (!p2p) {
        r.info = &find_collective(c.collective);
        if (r.info->kind == CollectiveKind::kAlltoallv)
          throw InputError("stage '" + stage.name +
                           "': alltoallv needs a matrix; use alltoall in training steps");
        r.algorithm = find_algorithm(c.collective, c.algorithm).make(params);
        r.algorithm->place(topology);
        if (!r.algorithm->runs_on_groups())
          throw InputError("stage '" + stage.name + "': algorithm " + c.algorithm +
                           " does not run on groups");
      }
      stage_collectives_[s].push_back(static_cast<int>(collectives_.size()));
      collectives_.push_back(std::move(r));
    };
    for (const StageCollective& c : stage.collectives) add(c, false);
    if (stage.p2p) add(*stage.p2p, true);
  }
  record_.stage_start.assign(config.stages.size(), std::vector<double>(chips_, 0));
  record_.stage_end.assign(config.stages.size(), std::vector<double>(chips_, 0));
  record_.finals.assign(collectives_.size(), std::vector<std::vector<Contribution>>(chips_));
}

void TrainingStep::run(Transport& fabric) {
  const int r = fabric.rank();
  const int per_iteration = static_cast<int>(collectives_.size());
  for (int it = 0; it < config_.iterations; ++it)
    for (std::size_t s = 0; s < config_.stages.size(); ++s) {
      const double start = fabric.now();
      if (it == 0) record_.stage_start[s][r] = start;
      for (int k : stage_collectives_[s]) {
        const ResolvedCollective& c = collectives_[k];
        const int group = c.groups.group_of[r], local = c.groups.position[r];
        if (group < 0) continue;
        const std::vector<int>& members = c.groups.members[group];
        GroupTransport transport(fabric, members, local, (it * per_iteration + k) * kStepsPerCollective);
        const int g = static_cast<int>(members.size());
        if (c.p2p) {  // to the next chip of the group, from the previous one
          std::vector<RequestPtr> requests;
          if (local + 1 < g)
            requests.push_back(transport.send(local + 1, Message{{Piece{0, c.bytes, {}}}}, 0));
          if (local > 0) requests.push_back(transport.recv(local - 1, 0));
          transport.wait_all(requests);
          continue;
        }
        const int chunks = c.algorithm->chunks(g);
        Layout layout = make_layout(c.info->kind, c.bytes, g, chunks, local);
        Chip chip(transport, std::move(layout.slot_bytes), std::move(layout.initial), reduce_rate_);
        c.algorithm->run(chip);
        record_.finals[k][r] = chip.slots();
      }
      // The compute the communication did not cover.
      const double left = compute_s_[s] - (fabric.now() - start);
      if (left > 0) fabric.compute(left, config_.stages[s].name);
      if (it == 0) record_.stage_end[s][r] = fabric.now();
    }
}

Verdict TrainingStep::verdict() const {
  Verdict verdict;
  for (std::size_t k = 0; k < collectives_.size(); ++k) {
    const ResolvedCollective& c = collectives_[k];
    if (c.p2p) continue;
    for (const auto& members : c.groups.members) {
      std::vector<std::vector<Contribution>> finals;
      for (int r : members) finals.push_back(record_.finals[k][r]);
      const int g = static_cast<int>(members.size());
      const Verdict v = verify(c.info->kind, g, c.algorithm->chunks(g), finals);
      if (v.wrong > 0 && verdict.wrong == 0)
        verdict.first_error = "stage '" + config_.stages[c.stage].name + "': " + v.first_error;
      verdict.wrong += v.wrong;
    }
  }
  return verdict;
}

double TrainingStep::compute_s() const {
  double total = 0;
  for (double s : compute_s_) total += s;
  return total;
}

double TrainingStep::model_s(const CostInput& in) const {
  double total = 0;
  for (std::size_t s = 0; s < config_.stages.size(); ++s) {
    double comm = 0;
    for (int k : stage_collectives_[s]) {
      const ResolvedCollective& c = collectives_[k];
      double slowest = 0;
      for (const auto& members : c.groups.members) {
        CostInput group{in.routes,
                        static_cast<int>(members.size()),
                        c.bytes,
                        in.transfer_overhead,
                        in.reduce_bandwidth,
                        nullptr,
                        members};
        if (c.p2p) {
          for (std::size_t i = 0; i + 1 < members.size(); ++i)
            slowest =
                std::max(slowest, group.alpha(static_cast<int>(i), static_cast<int>(i) + 1) +
                                      static_cast<double>(c.bytes) /
                                          group.bandwidth(static_cast<int>(i), static_cast<int>(i) + 1));
        } else {
          slowest = std::max(slowest, c.algorithm->model_s(group));
        }
      }
      comm += slowest;
    }
    total += std::max(comm, compute_s_[s]);
  }
  return total * config_.iterations;
}

}  // namespace ultrasim
