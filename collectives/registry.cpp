#include "collectives/algorithm.hpp"
#include "topology/errors.hpp"
#include "topology/suggest.hpp"

namespace ultrasim {

const std::vector<AlgorithmEntry>& algorithms() {
  // One row per algorithm, grouped by collective; the order is the order of `ultrasim list`.
  // clang-format off
  static const std::vector<AlgorithmEntry> kTable{
      ring_allreduce(),
      bidir_ring_allreduce(),
      recursive_doubling_allreduce(),
      rabenseifner_allreduce(),
      double_binary_tree_allreduce(),
      one_shot_allreduce(),
      two_shot_allreduce(),
      hierarchical_allreduce(),
      switch_reduce_allreduce(),
      ring_allgather(),
      direct_allgather(),
      bruck_allgather(),
      recursive_doubling_allgather(),
      hierarchical_allgather(),
      ring_reducescatter(),
      direct_reducescatter(),
      recursive_halving_reducescatter(),
      hierarchical_reducescatter(),
      binomial_tree_broadcast(),
      chain_broadcast(),
      scatter_allgather_broadcast(),
      binomial_tree_reduce(),
      chain_reduce(),
      reducescatter_gather_reduce(),
      direct_alltoall(),
      pairwise_alltoall(),
      bruck_alltoall(),
      ring_alltoall(),
      hierarchical_alltoall(),
      direct_alltoallv(),
      pairwise_alltoallv(),
  };
  // clang-format on

  return kTable;
}

const AlgorithmEntry& find_algorithm(const std::string& collective, const std::string& name) {
  find_collective(collective);  // an unknown collective is reported as such
  std::vector<std::string> known;
  for (const auto& entry : algorithms()) {
    if (entry.collective != collective) continue;
    if (entry.name == name) return entry;
    known.push_back(entry.name);
  }
  throw InputError(unknown_name_message("algorithm", name, known) + " (for " + collective + ")");
}

}  // namespace ultrasim
