#include "workloads/chakra/chakra_program.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <unordered_map>

#include "collectives/chip.hpp"
#include "collectives/group_transport.hpp"
#include "sim/machine/chip_model.hpp"
#include "topology/base/errors.hpp"
#include "workloads/collective/collective_job.hpp"

namespace ultrasim {
namespace {

constexpr int kStepsPerCollective = 1 << 20;  // collective c labels its messages from (c + 1) x 2^20 on
constexpr int kMaxCollectives = std::numeric_limits<int>::max() / kStepsPerCollective - 1;

std::string node_text(const ChakraRank& rank, int r, const ChakraNode& node) {
  return "Chakra trace '" + rank.file + "': rank " + std::to_string(r) + " node " + std::to_string(node.id) +
         " '" + node.name + "'";
}

// ultrasim's size (nccl-tests': an all-gather's whole output) of a collective whose trace says `bytes`
// under ASTRA-sim's convention, where an all-gather's comm_size is each rank's input.
std::uint64_t nccl_size(const std::string& collective, std::uint64_t bytes, int g) {
  return collective == "allgather" ? bytes * static_cast<std::uint64_t>(g) : bytes;
}

// The algorithm of `c` the options name, or with "auto" the lowest model_s among those that run on it;
// throws InputError when some member of its group never runs it.
void choose_algorithm(ChakraCollective& c, const Machine& machine, const ParamSet& params,
                      const ChakraOptions& options) {
  if (c.started != static_cast<int>(c.members.size()))
    throw InputError("Chakra trace: collective " + std::to_string(c.index) + " of process group '" + c.group +
                     "' (" + c.info->name + ") is run by " + std::to_string(c.started) + " of its " +
                     std::to_string(c.members.size()) + " ranks");
  const auto named = options.algorithms.find(c.info->name);
  const auto any = options.algorithms.find("*");
  const std::string word = named != options.algorithms.end() ? named->second
                           : any != options.algorithms.end() ? any->second
                                                             : "auto";
  const bool whole = static_cast<int>(c.members.size()) == machine.p();
  const int g = static_cast<int>(c.members.size());
  double best = std::numeric_limits<double>::infinity();
  for (const AlgorithmEntry* entry : algorithm_candidates(c.info->name, word)) {
    std::unique_ptr<Algorithm> algorithm = entry->make(params);
    try {
      algorithm->place(*machine.topology);
    } catch (const InputError&) {
      if (word != "auto") throw;
      continue;
    }
    if (!whole && !algorithm->runs_on_groups()) {
      if (word != "auto")
        throw InputError("algorithm " + entry->name + " does not run on groups (process group '" + c.group +
                         "')");
      continue;
    }
    const double cost = algorithm->model_s(CostInput{*machine.routes, g, c.bytes, machine.transfer_overhead(),
                                                     model_of(params).reduce_bandwidth, nullptr,
                                                     whole ? std::vector<int>{} : c.members});
    if (c.run == nullptr || cost < best)
      best = cost, c.run = std::move(algorithm), c.algorithm = entry->name, c.model_s = cost;
  }
  if (c.run == nullptr)
    throw InputError("no " + c.info->name + " algorithm runs on process group '" + c.group +
                     "' (every algorithm of it refuses this topology or a group of its chips)");
}

// ultrasim runs a collective over its process group on every path of the fabric: an involved_dim that
// leaves a network dimension out (ASTRA-sim's collectives over some dimensions only) is refused.
void check_involved_dim(const ChakraNode& node, const std::string& where) {
  if (std::all_of(node.involved_dim.begin(), node.involved_dim.end(), [](bool b) { return b; })) return;
  std::string list;
  for (bool b : node.involved_dim) list += std::string(list.empty() ? "" : ",") + (b ? "true" : "false");
  throw InputError(where + ": involved_dim [" + list +
                   "] leaves network dimensions out; ultrasim runs a collective over its process group on "
                   "the whole fabric: name the group's ranks instead (pg_name, --comm-group)");
}

// Process groups by name: the traces' metadata (every rank's must agree), then the user's over them; each
// sorted, every rank below the trace's count.
std::map<std::string, std::vector<int>> process_groups(const std::vector<ChakraRank>& trace,
                                                       const ChakraOptions& options) {
  std::map<std::string, std::vector<int>> groups;
  for (const ChakraRank& rank : trace)
    for (const auto& [name, ranks] : rank.groups) {
      auto [it, added] = groups.emplace(name, ranks);
      if (!added && it->second != ranks)
        throw InputError("Chakra trace '" + rank.file + "': process group '" + name +
                         "' lists other ranks than rank 0's file does");
    }
  for (const auto& [name, ranks] : options.groups) groups[name] = ranks;
  for (auto& [name, ranks] : groups) {
    if (ranks.empty())  // PyTorch's metadata: every rank
      for (int r = 0; r < static_cast<int>(trace.size()); ++r) ranks.push_back(r);
    std::sort(ranks.begin(), ranks.end());
    for (int r : ranks)
      if (r >= static_cast<int>(trace.size()))
        throw InputError("process group '" + name + "' lists rank " + std::to_string(r) + "; the trace has " +
                         std::to_string(trace.size()) + " ranks");
  }
  return groups;
}

}  // namespace

ChakraStep::ChakraStep(std::vector<ChakraRank> trace, const Machine& machine, const ParamSet& params,
                       const ChakraOptions& options)
    : trace_(std::move(trace)), options_(options), reduce_rate_(model_of(params).reduce_bandwidth) {
  const ChipParams chip = chip_of(params);
  flops_ = chip.chip_flops * chip.compute_efficiency;
  hbm_ = chip.hbm_bandwidth;
  const int n = static_cast<int>(trace_.size());
  const std::map<std::string, std::vector<int>> groups = process_groups(trace_, options);
  std::map<std::pair<std::string, int>, int> found;  // (group, k) -> collective
  plans_.resize(n);
  for (int r = 0; r < n; ++r) plan_rank(r, groups, found);
  for (ChakraCollective& c : collectives_) choose_algorithm(c, machine, params, options);
  finals_.assign(collectives_.size(), std::vector<std::vector<Contribution>>(n));
  p2p_errors_.assign(n, "");
  ended_.assign(n, 0);
  p2p_wrong_.assign(n, 0);
  critical_path_s_ = find_critical_path(machine);
}

// Rank r's steps and their dependencies, in Kahn's order (smallest ready id first); InputError for a
// dependency on a node the rank lacks or a cycle.
void ChakraStep::link_rank(int r) {
  const ChakraRank& rank = trace_[r];
  RankPlan& plan = plans_[r];
  std::unordered_map<std::uint64_t, int> index;
  plan.steps.resize(rank.nodes.size());
  for (std::size_t i = 0; i < rank.nodes.size(); ++i) {
    plan.steps[i].node = &rank.nodes[i];
    if (!index.emplace(rank.nodes[i].id, static_cast<int>(i)).second)
      throw InputError(node_text(rank, r, rank.nodes[i]) + ": a second node with this id");
  }
  for (std::size_t i = 0; i < rank.nodes.size(); ++i)
    for (std::size_t d = 0; d < rank.nodes[i].deps.size(); ++d) {
      const std::uint64_t dep = rank.nodes[i].deps[d];
      if (options_.data_deps_only && d >= rank.nodes[i].data_deps) {
        ++ignored_deps_;
        continue;
      }
      const auto it = index.find(dep);
      if (it == index.end())
        throw InputError(node_text(rank, r, rank.nodes[i]) + ": depends on node " + std::to_string(dep) +
                         ", which this rank's trace does not have");
      plan.steps[it->second].children.push_back(static_cast<int>(i));
      ++plan.steps[i].parents;
    }
  auto later = [&](int a, int b) { return rank.nodes[a].id > rank.nodes[b].id; };
  std::priority_queue<int, std::vector<int>, decltype(later)> ready(later);
  std::vector<int> waiting(plan.steps.size());
  for (std::size_t i = 0; i < plan.steps.size(); ++i)
    if ((waiting[i] = plan.steps[i].parents) == 0) ready.push(static_cast<int>(i));
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    plan.order.push_back(i);
    for (int next : plan.steps[i].children)
      if (--waiting[next] == 0) ready.push(next);
  }
  for (std::size_t i = 0; i < plan.steps.size() && plan.order.size() != plan.steps.size(); ++i)
    if (waiting[i] > 0)
      throw InputError(node_text(rank, r, rank.nodes[i]) +
                       ": its dependencies (data or control) form a cycle: its streams would deadlock");
}

// Rank r's steps (link_rank), their streams and costs, and the collectives they take part in.
void ChakraStep::plan_rank(int r, const std::map<std::string, std::vector<int>>& groups,
                           std::map<std::pair<std::string, int>, int>& found) {
  link_rank(r);
  const ChakraRank& rank = trace_[r];
  RankPlan& plan = plans_[r];
  const int n = static_cast<int>(trace_.size());
  std::vector<int> everyone(n);
  for (int k = 0; k < n; ++k) everyone[k] = k;
  std::map<std::string, int> count;  // collectives run so far per group
  for (int i : plan.order) {
    ++nodes_;
    Step& step = plan.steps[i];
    const ChakraNode* node = step.node;
    const std::string where = node_text(rank, r, *node);
    switch (node->type) {
      case ChakraNodeType::kCompute:
        step.compute_s = node->duration_s > 0 ? node->duration_s
                                              : std::max(node->num_ops / flops_, node->tensor_bytes / hbm_);
        step.stream = node->cpu_op ? Stream::kHost : Stream::kCompute;
        (node->cpu_op ? plan.host_s : plan.compute_s) += step.compute_s;
        break;
      case ChakraNodeType::kMemLoad:
      case ChakraNodeType::kMemStore:  // a DMA between HBM and the chip: on a communication stream
        step.compute_s = node->duration_s > 0 ? node->duration_s : node->tensor_bytes / hbm_;
        step.stream = Stream::kComm;
        plan.memory_s += step.compute_s;
        break;
      case ChakraNodeType::kSend:
      case ChakraNodeType::kRecv:
        if (node->peer >= n || node->peer == r)
          throw InputError(where + ": its peer, rank " + std::to_string(node->peer) +
                           ", is not another rank of the " + std::to_string(n) + "-rank trace");
        step.stream = node->type == ChakraNodeType::kSend ? Stream::kComm : Stream::kNone;
        break;
      case ChakraNodeType::kCollective: {
        const bool barrier = node->collective == "barrier";
        const auto group = groups.find(node->group);
        if (!node->group.empty() && group == groups.end())
          throw InputError(where + ": process group '" + node->group +
                           "' is not in the trace's metadata or a --comm-group file; name its ranks "
                           "(--process-group NAME=RANKS)");
        const std::vector<int>& members = node->group.empty() ? everyone : group->second;
        check_involved_dim(*node, where);
        if (!std::binary_search(members.begin(), members.end(), r))
          throw InputError(where + ": rank " + std::to_string(r) + " is not in its process group '" +
                           node->group + "'");
        const std::string collective = barrier ? "allreduce" : node->collective;
        const int g = static_cast<int>(members.size());
        const std::uint64_t bytes = barrier               ? 4
                                    : options_.nccl_sizes ? node->bytes
                                                          : nccl_size(collective, node->bytes, g);
        const int k = count[node->group]++;
        auto [it, added] =
            found.emplace(std::make_pair(node->group, k), static_cast<int>(collectives_.size()));
        if (added) {
          if (static_cast<int>(collectives_.size()) >= kMaxCollectives)
            throw InputError(where + ": more than " + std::to_string(kMaxCollectives) + " collectives");
          ChakraCollective c;
          c.group = node->group, c.index = k, c.members = members;
          c.info = &find_collective(collective);
          c.bytes = bytes;
          collectives_.push_back(std::move(c));
        }
        ChakraCollective& c = collectives_[it->second];
        if (c.info->name != collective || c.bytes != bytes)
          throw InputError(where + ": collective " + std::to_string(k) + " of process group '" + node->group +
                           "' is " + collective + " of " + std::to_string(bytes) + " bytes here, but " +
                           c.info->name + " of " + std::to_string(c.bytes) + " bytes on another rank");
        ++c.started;
        step.collective = it->second;
        step.stream = Stream::kComm;
        break;
      }
      case ChakraNodeType::kMetadata:
        break;
    }
  }
}

// One node, on the activity `fabric` (compute takes `compute_s`).
void ChakraStep::execute(Transport& fabric, const Step& step, double compute_s) {
  const int r = fabric.rank();
  const ChakraNode& node = *step.node;
  switch (node.type) {
    case ChakraNodeType::kCompute:
    case ChakraNodeType::kMemLoad:
    case ChakraNodeType::kMemStore:
      if (compute_s > 0) fabric.compute(compute_s, node.name);
      break;
    case ChakraNodeType::kSend:
      fabric.wait_all({fabric.send(node.peer, Message{{Piece{0, node.bytes, {}}}}, node.tag)});
      break;
    case ChakraNodeType::kRecv: {
      RequestPtr receive = fabric.recv(node.peer, node.tag);
      fabric.wait_all({receive});
      if (receive->message.bytes() != node.bytes && p2p_wrong_[r]++ == 0)
        p2p_errors_[r] = "rank " + std::to_string(r) + " node " + std::to_string(node.id) + " received " +
                         std::to_string(receive->message.bytes()) + " bytes from rank " +
                         std::to_string(node.peer) + ", expected " + std::to_string(node.bytes);
      break;
    }
    case ChakraNodeType::kCollective: {
      const ChakraCollective& c = collectives_[step.collective];
      const int local =
          static_cast<int>(std::lower_bound(c.members.begin(), c.members.end(), r) - c.members.begin());
      const int g = static_cast<int>(c.members.size());
      GroupTransport transport(fabric, c.members, local, (step.collective + 1) * kStepsPerCollective);
      Layout layout = make_layout(c.info->kind, c.bytes, g, c.run->chunks(g), local);
      Chip chip(transport, std::move(layout.slot_bytes), std::move(layout.initial), reduce_rate_);
      c.run->run(chip);
      finals_[step.collective][r] = chip.slots();
      break;
    }
    case ChakraNodeType::kMetadata:
      break;
  }
}

void ChakraStep::run(Transport& fabric) {
  const int r = fabric.rank();
  p2p_wrong_[r] = 0, p2p_errors_[r].clear();
  nodes_ended(r, 0);
  if (options_.overlap) return run_overlapped(fabric);
  std::size_t ended = 0;
  for (int i : plans_[r].order) {
    execute(fabric, plans_[r].steps[i], plans_[r].steps[i].compute_s);
    nodes_ended(r, ++ended);
  }
}

void ChakraStep::nodes_ended(int rank, std::size_t count) {
  ended_all_ = ended_all_ - ended_[rank] + count;
  ended_[rank] = count;
  if (progress_) progress_->update(ended_all_);
}

ChakraStep::Issuer::Issuer(const ChakraStep& owner, const RankPlan& plan) : owner_(owner), plan_(plan) {
  waiting_.resize(plan.steps.size());
  issued_.assign(plan.steps.size(), 0);
  ended_.assign(plan.steps.size(), 0);
  for (std::size_t i = 0; i < plan.steps.size(); ++i)
    if ((waiting_[i] = plan.steps[i].parents) == 0) ready_.push_back(static_cast<int>(i));
  std::make_heap(ready_.begin(), ready_.end(), [this](int a, int b) { return later(a, b); });
}

// Without overlap every node shares one stream.
int ChakraStep::Issuer::stream_of(int step) const {
  return owner_.options_.overlap ? static_cast<int>(plan_.steps[step].stream) : 0;
}

bool ChakraStep::Issuer::instant(int step) const {
  const Step& s = plan_.steps[step];
  const ChakraNodeType type = s.node->type;
  return type == ChakraNodeType::kMetadata || (s.collective < 0 && type != ChakraNodeType::kSend &&
                                               type != ChakraNodeType::kRecv && s.compute_s <= 0);
}

std::vector<ChakraStep::Issuer::Issued> ChakraStep::Issuer::issue() {
  const auto order = [this](int a, int b) { return later(a, b); };
  const ChakraOptions& o = owner_.options_;
  std::vector<Issued> issued;
  std::vector<int> held;
  while (!ready_.empty()) {
    std::pop_heap(ready_.begin(), ready_.end(), order);
    const int i = ready_.back();
    ready_.pop_back();
    const int s = stream_of(i);
    const int limit = !o.overlap                             ? 1
                      : s == static_cast<int>(Stream::kComm) ? o.comm_streams
                      : s == static_cast<int>(Stream::kNone) ? 0
                                                             : 1;
    if (limit > 0 && busy_[s] >= limit) {
      held.push_back(i);
      continue;
    }
    ++busy_[s];
    issued_[i] = 1;
    if (instant(i)) {
      finish(i);
      continue;
    }
    const bool slowed =
        o.overlap && plan_.steps[i].stream == Stream::kCompute && busy_[static_cast<int>(Stream::kComm)] > 0;
    issued.push_back({i, slowed ? 1 + o.comm_slowdown : 1.0});
  }
  for (int i : held) ready_.push_back(i), std::push_heap(ready_.begin(), ready_.end(), order);
  return issued;
}

int ChakraStep::Issuer::stuck() const {
  for (std::size_t i = 0; i < issued_.size(); ++i)
    if (issued_[i] && !ended_[i]) return static_cast<int>(i);
  return -1;
}

void ChakraStep::Issuer::finish(int step) {
  ended_[step] = 1;
  ++ended_count_;
  const auto order = [this](int a, int b) { return later(a, b); };
  --busy_[stream_of(step)];
  for (int next : plan_.steps[step].children)
    if (--waiting_[next] == 0) ready_.push_back(next), std::push_heap(ready_.begin(), ready_.end(), order);
}

// Whenever a node ends, the rank issues what the issue loop takes, each node on an activity of its own.
void ChakraStep::run_overlapped(Transport& fabric) {
  const RankPlan& plan = plans_[fabric.rank()];
  Issuer issuer(*this, plan);
  std::vector<RequestPtr> running;
  std::vector<int> running_step;
  for (;;) {
    for (const Issuer::Issued& next : issuer.issue()) {
      const Step& step = plan.steps[next.step];
      const double compute_s = step.compute_s * next.slowdown;
      running.push_back(
          fabric.spawn([this, &step, compute_s](Transport& t) { execute(t, step, compute_s); }));
      running_step.push_back(next.step);
    }
    nodes_ended(fabric.rank(), issuer.ended());
    if (running.empty()) return;
    const std::size_t k = fabric.wait_any(running);
    issuer.finish(running_step[k]);
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
    running_step.erase(running_step.begin() + static_cast<std::ptrdiff_t>(k));
  }
}

Verdict ChakraStep::verdict() const {
  Verdict all;
  for (std::size_t k = 0; k < collectives_.size(); ++k) {
    const ChakraCollective& c = collectives_[k];
    std::vector<std::vector<Contribution>> finals;
    for (int r : c.members) finals.push_back(finals_[k][r]);
    const int g = static_cast<int>(c.members.size());
    const Verdict v = verify(c.info->kind, g, c.run->chunks(g), finals);
    if (v.wrong > 0 && all.wrong == 0)
      all.first_error =
          "collective " + std::to_string(c.index) + " of process group '" + c.group + "': " + v.first_error;
    all.wrong += v.wrong;
  }
  for (std::size_t r = 0; r < p2p_wrong_.size(); ++r) {
    if (p2p_wrong_[r] > 0 && all.wrong == 0) all.first_error = p2p_errors_[r];
    all.wrong += p2p_wrong_[r];
  }
  return all;
}

}  // namespace ultrasim
