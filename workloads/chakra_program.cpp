#include "workloads/chakra_program.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <unordered_map>

#include "collectives/chip.hpp"
#include "collectives/group_transport.hpp"
#include "topology/base/errors.hpp"
#include "workloads/collective_job.hpp"

namespace ultrasim {
namespace {

constexpr int kStepsPerCollective = 1 << 20;  // collective c labels its messages from (c + 1) x 2^20 on
constexpr int kMaxCollectives = std::numeric_limits<int>::max() / kStepsPerCollective - 1;

std::string node_text(const ChakraRank& rank, const ChakraNode& node) {
  return "Chakra trace '" + rank.file + "': node " + std::to_string(node.id) + " '" + node.name + "'";
}

// The rank's nodes in an order that honours every dependency: ready nodes smallest id first.
std::vector<const ChakraNode*> run_order(const ChakraRank& rank) {
  std::unordered_map<std::uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < rank.nodes.size(); ++i)
    if (!index.emplace(rank.nodes[i].id, i).second)
      throw InputError(node_text(rank, rank.nodes[i]) + ": a second node with this id");
  std::vector<int> waiting(rank.nodes.size(), 0);
  std::vector<std::vector<std::size_t>> after(rank.nodes.size());
  for (std::size_t i = 0; i < rank.nodes.size(); ++i)
    for (std::uint64_t dep : rank.nodes[i].deps) {
      const auto it = index.find(dep);
      if (it == index.end())
        throw InputError(node_text(rank, rank.nodes[i]) + ": depends on node " + std::to_string(dep) +
                         ", which this rank's trace does not have");
      after[it->second].push_back(i);
      ++waiting[i];
    }
  auto later = [&](std::size_t a, std::size_t b) { return rank.nodes[a].id > rank.nodes[b].id; };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(later)> ready(later);
  for (std::size_t i = 0; i < rank.nodes.size(); ++i)
    if (waiting[i] == 0) ready.push(i);
  std::vector<const ChakraNode*> order;
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    order.push_back(&rank.nodes[i]);
    for (std::size_t next : after[i])
      if (--waiting[next] == 0) ready.push(next);
  }
  if (order.size() != rank.nodes.size()) {
    for (std::size_t i = 0; i < rank.nodes.size(); ++i)
      if (waiting[i] > 0)
        throw InputError(node_text(rank, rank.nodes[i]) + ": its dependencies form a cycle");
  }
  return order;
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
                                                     params.optional_rate("reduce_bandwidth"), nullptr,
                                                     whole ? std::vector<int>{} : c.members});
    if (c.run == nullptr || cost < best) best = cost, c.run = std::move(algorithm), c.algorithm = entry->name;
  }
  if (c.run == nullptr)
    throw InputError("no " + c.info->name + " algorithm runs on process group '" + c.group + "'");
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
    : trace_(std::move(trace)), reduce_rate_(params.optional_rate("reduce_bandwidth")) {
  const int n = static_cast<int>(trace_.size());
  const double flops = params.number("chip_flops") * params.number("compute_efficiency");
  const double hbm = params.number("hbm_bandwidth");
  const std::map<std::string, std::vector<int>> groups = process_groups(trace_, options);
  std::vector<int> everyone(n);
  for (int r = 0; r < n; ++r) everyone[r] = r;

  std::map<std::pair<std::string, int>, int> found;  // (group, k) -> collective
  order_.resize(n);
  compute_s_.assign(n, 0);
  for (int r = 0; r < n; ++r) {
    const ChakraRank& rank = trace_[r];
    std::map<std::string, int> count;  // collectives run so far per group
    for (const ChakraNode* node : run_order(rank)) {
      ++nodes_;
      Step step{node};
      const std::string where = node_text(rank, *node);
      switch (node->type) {
        case ChakraNodeType::kCompute:
          step.compute_s = node->duration_s > 0 ? node->duration_s
                                                : std::max(node->num_ops / flops, node->tensor_bytes / hbm);
          compute_s_[r] += step.compute_s;
          break;
        case ChakraNodeType::kSend:
        case ChakraNodeType::kRecv:
          if (node->peer >= n || node->peer == r)
            throw InputError(where + ": its peer, rank " + std::to_string(node->peer) +
                             ", is not another rank of the " + std::to_string(n) + "-rank trace");
          break;
        case ChakraNodeType::kCollective: {
          const bool barrier = node->collective == "barrier";
          const auto group = groups.find(node->group);
          if (!node->group.empty() && group == groups.end())
            throw InputError(where + ": process group '" + node->group +
                             "' is not in the trace's metadata; name its ranks (process_groups)");
          const std::vector<int>& members = node->group.empty() ? everyone : group->second;
          if (!std::binary_search(members.begin(), members.end(), r))
            throw InputError(where + ": rank " + std::to_string(r) + " is not in its process group '" +
                             node->group + "'");
          const int k = count[node->group]++;
          auto [it, added] =
              found.emplace(std::make_pair(node->group, k), static_cast<int>(collectives_.size()));
          if (added) {
            if (static_cast<int>(collectives_.size()) >= kMaxCollectives)
              throw InputError(where + ": more than " + std::to_string(kMaxCollectives) + " collectives");
            ChakraCollective c;
            c.group = node->group, c.index = k, c.members = members;
            c.info = &find_collective(barrier ? "allreduce" : node->collective);
            c.bytes = barrier ? 4 : node->bytes;
            collectives_.push_back(std::move(c));
          }
          ChakraCollective& c = collectives_[it->second];
          if (c.info->name != (barrier ? "allreduce" : node->collective) ||
              c.bytes != (barrier ? 4 : node->bytes))
            throw InputError(where + ": collective " + std::to_string(k) + " of process group '" +
                             node->group + "' is " + node->collective + " of " + std::to_string(node->bytes) +
                             " bytes here, but " + c.info->name + " of " + std::to_string(c.bytes) +
                             " bytes on another rank");
          ++c.started;
          step.collective = it->second;
          break;
        }
        case ChakraNodeType::kMetadata:
          break;
      }
      order_[r].push_back(step);
    }
  }
  for (ChakraCollective& c : collectives_) choose_algorithm(c, machine, params, options);
  finals_.assign(collectives_.size(), std::vector<std::vector<Contribution>>(n));
  p2p_errors_.assign(n, "");
  p2p_wrong_.assign(n, 0);
}

void ChakraStep::run(Transport& fabric) {
  const int r = fabric.rank();
  p2p_wrong_[r] = 0, p2p_errors_[r].clear();
  for (const Step& step : order_[r]) {
    const ChakraNode& node = *step.node;
    switch (node.type) {
      case ChakraNodeType::kCompute:
        if (step.compute_s > 0) fabric.compute(step.compute_s, node.name);
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
