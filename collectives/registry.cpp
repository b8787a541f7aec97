#include "collectives/algorithm.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/suggest.hpp"

namespace ultrasim {

// One row per algorithm: X(f) names `AlgorithmEntry f()`, defined in the algorithm's own file. Grouped
// by collective; the order is the order of `ultrasim list`. Adding an algorithm = its file + one row.
// clang-format off
#define ULTRASIM_ALGORITHMS(X) \
  X(ring_allreduce) \
  X(bidir_ring_allreduce) \
  X(recursive_doubling_allreduce) \
  X(rabenseifner_allreduce) \
  X(double_binary_tree_allreduce) \
  X(one_shot_allreduce) \
  X(two_shot_allreduce) \
  X(hierarchical_allreduce) \
  X(switch_reduce_allreduce) \
  X(nvls_allreduce) \
  X(torus_ring_2d_allreduce) \
  X(ring_allgather) \
  X(direct_allgather) \
  X(bruck_allgather) \
  X(recursive_doubling_allgather) \
  X(hierarchical_allgather) \
  X(ring_reducescatter) \
  X(direct_reducescatter) \
  X(recursive_halving_reducescatter) \
  X(hierarchical_reducescatter) \
  X(binomial_tree_broadcast) \
  X(chain_broadcast) \
  X(scatter_allgather_broadcast) \
  X(binomial_tree_reduce) \
  X(chain_reduce) \
  X(reducescatter_gather_reduce) \
  X(direct_alltoall) \
  X(pairwise_alltoall) \
  X(bruck_alltoall) \
  X(ring_alltoall) \
  X(hierarchical_alltoall) \
  X(direct_alltoallv) \
  X(pairwise_alltoallv)
// clang-format on

#define ULTRASIM_DECLARE(f) AlgorithmEntry f();
ULTRASIM_ALGORITHMS(ULTRASIM_DECLARE)
#undef ULTRASIM_DECLARE

const std::vector<AlgorithmEntry>& algorithms() {
#define ULTRASIM_ROW(f) f(),
  static const std::vector<AlgorithmEntry> kTable{ULTRASIM_ALGORITHMS(ULTRASIM_ROW)};
#undef ULTRASIM_ROW
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
