// A Chakra execution trace (workloads/chakra/chakra_trace.hpp) as the program its chips run: rank r of the
// trace on chip r. A node is ready once every node it depends on (data and control dependencies) has ended.
// With `overlap` (the default, ASTRA-sim's rule) each rank runs its ready nodes side by side on three
// kinds of stream: the compute stream (compute nodes, one at a time), the host (CPU ops, `is_cpu_op`, one
// at a time) and the communication streams (collectives, sends, memory loads and stores: `comm_streams`
// at once, 1 as in ASTRA-sim, 0: no limit); a receive takes no stream. Whenever a node ends, the rank
// issues its ready nodes smallest id first, each whose stream has room (ASTRA-sim's issue loop); a node
// that takes no time ends as it is issued. Without `overlap`, a rank runs its nodes one at a time, in
// dependency order, smallest ready id first. A communication node with is_cpu_op (PyTorch's host-side
// call) is a CPU op of its duration. What each node costs:
//   COMP_NODE       its duration (duration_micros, else "runtime"), else the chip's roofline:
//                   max(num_ops / (chip_flops x compute_efficiency), tensor_size / hbm_bandwidth);
//                   x (1 + comm_slowdown) when it starts while its rank communicates;
//   MEM_LOAD_NODE,  its duration, else tensor_size bytes to or from HBM: tensor_size / hbm_bandwidth;
//   MEM_STORE_NODE
//   COMM_SEND_NODE  a send of comm_size bytes to comm_dst labelled comm_tag, ended when it has left;
//   COMM_RECV_NODE  a receive from comm_src labelled comm_tag, ended when it has arrived;
//   COMM_COLL_NODE  the collective comm_type on its process group (pg_name; "" or "0": every rank)
//                   through one of ultrasim's algorithms (verified like any run); its size is comm_size
//                   read under the trace's convention (chakra_trace.hpp). BARRIER is an all-reduce of one
//                   4-byte element;
//   METADATA_NODE   nothing.
// The k-th collective of a group in a rank's dependency order (smallest ready id first) is the k-th of
// every member: they must agree on the collective and its size.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/algorithm.hpp"
#include "collectives/collective.hpp"
#include "sim/machine/program.hpp"
#include "topology/base/progress.hpp"
#include "workloads/chakra/chakra_trace.hpp"

namespace ultrasim {

struct ChakraOptions {
  // Per collective (allreduce, alltoall, ...; "*": every other): an algorithm, or "auto" (the default):
  // the lowest model_s on the group among the algorithms that run on it.
  std::map<std::string, std::string> algorithms;
  // Process groups by name, over the trace's own (GlobalMetadata attributes "pg:NAME", PyTorch's
  // process-group metadata nodes) and a communicator-group file's.
  std::map<std::string, std::vector<int>> groups;
  bool overlap = true;       // ready nodes run side by side on their streams (false: one at a time)
  int comm_streams = 1;      // communication nodes a rank runs at once (0: no limit; 1: ASTRA-sim's)
  double comm_slowdown = 0;  // a compute node started while its rank communicates takes (1 + this) x longer
  bool nccl_sizes = false;   // comm_size is nccl-tests' size (false: ASTRA-sim's, chakra_trace.hpp)
  // Only data dependencies order nodes (control ones are ignored). Traces converted by Chakra's schema
  // 1.0.1 converter point control dependencies at parent operators: the thread's root, left out of the
  // file, and the CPU op that launched a kernel, which closes a cycle with the kernel's data dependency.
  bool data_deps_only = false;
};

// One collective of the trace: the k-th on a group, as every member runs it.
struct ChakraCollective {
  std::string group;  // "" : every rank
  int index = 0;      // k
  const CollectiveInfo* info = nullptr;
  std::string algorithm;  // the name chosen
  std::unique_ptr<Algorithm> run;
  std::vector<int> members;  // ranks, ascending
  std::uint64_t bytes = 0;   // ultrasim's size (nccl-tests')
  int started = 0;           // members whose trace has it
  double model_s = 0;        // the algorithm's closed form on its group
};

class ChakraStep : public Program {
 public:
  // Throws InputError (one line naming the file, the rank and the node) when ranks disagree on a
  // collective, a node depends on a node its rank does not have or on itself through a cycle, a peer or
  // group member is not a rank, a group is unknown, or a rank is missing from a collective of its group.
  ChakraStep(std::vector<ChakraRank> trace, const Machine& machine, const ParamSet& params,
             const ChakraOptions& options);
  bool takes_part(int rank) const override { return rank < ranks(); }
  void run(Transport& transport) override;
  Verdict verdict() const override;
  int ranks() const { return static_cast<int>(plans_.size()); }
  double compute_s(int rank) const { return plans_.at(rank).compute_s; }  // its compute stream's nodes
  double host_s(int rank) const { return plans_.at(rank).host_s; }        // its CPU ops
  double memory_s(int rank) const { return plans_.at(rank).memory_s; }    // its memory loads and stores
  std::size_t nodes() const { return nodes_; }
  // Advanced as nodes end, over every rank (a rank that runs again, on an engine `auto` hands the run
  // to, starts its count again). Null: none.
  void set_progress(Progress* progress) { progress_ = progress; }
  std::size_t ignored_deps() const { return ignored_deps_; }  // control dependencies ignored (data_deps_only)
  const std::vector<ChakraCollective>& collectives() const { return collectives_; }
  // The step as the ranks run it (the same issue loop and streams) with every node at its cost alone:
  // compute as above, a collective its algorithm's model_s, a message its path's time, no two messages
  // sharing a link. ASTRA-sim's congestion-unaware step with ultrasim's costs; the step itself where no
  // link is shared and every model_s is exact (workloads/chakra/chakra_critical_path.cpp).
  double critical_path_s() const { return critical_path_s_; }

 private:
  enum class Stream { kNone, kCompute, kHost, kComm };
  struct Step {
    const ChakraNode* node = nullptr;
    double compute_s = 0;
    int collective = -1;  // index into collectives_
    Stream stream = Stream::kNone;
    std::vector<int> children;  // steps that depend on this one
    int parents = 0;
  };
  struct RankPlan {
    std::vector<Step> steps;  // in file order
    std::vector<int> order;   // dependency order, smallest ready id first
    double compute_s = 0, host_s = 0, memory_s = 0;
  };
  // A rank's issue loop (ASTRA-sim's): which ready nodes start when, as run() and critical_path_s use it.
  class Issuer {
   public:
    struct Issued {
      int step;
      double slowdown;  // its compute's factor: 1 + comm_slowdown if its rank communicates as it starts
    };
    Issuer(const ChakraStep& owner, const RankPlan& plan);
    // Takes the ready nodes whose stream has room, smallest id first; a node that takes no time ends at
    // once (its children may then be taken too). Without overlap, one node at a time.
    std::vector<Issued> issue();
    void finish(int step);  // node `step` (issued) has ended
    std::size_t ended() const { return ended_count_; }
    // A node issued that never ended (-1: none), once nothing is left to happen.
    int stuck() const;

   private:
    // The ready heap's order: the larger node id below.
    bool later(int a, int b) const { return plan_.steps[a].node->id > plan_.steps[b].node->id; }
    int stream_of(int step) const;
    bool instant(int step) const;
    const ChakraStep& owner_;
    const RankPlan& plan_;
    std::vector<int> waiting_;  // per step: dependencies not yet ended
    std::vector<int> ready_;    // a heap: the smallest node id on top
    std::map<int, int> busy_;   // per stream: nodes running
    std::vector<char> issued_, ended_;
    std::size_t ended_count_ = 0;
  };
  void link_rank(int r);
  void plan_rank(int r, const std::map<std::string, std::vector<int>>& groups,
                 std::map<std::pair<std::string, int>, int>& found);
  void run_overlapped(Transport& fabric);
  void nodes_ended(int rank, std::size_t count);  // rank's nodes ended so far, for the progress
  void execute(Transport& fabric, const Step& step, double compute_s);
  double find_critical_path(const Machine& machine) const;
  // InputError naming the node of rank r that waits forever (for a message never sent, a collective a
  // member never issues): the ranks' streams deadlock.
  [[noreturn]] void deadlock(int r, int step,
                             const std::vector<std::vector<std::pair<int, int>>>& issued) const;
  // InputError naming rank src's send `step`, whose message to dst (comm_tag) no receive takes.
  [[noreturn]] void never_received(int src, int step, int dst, int tag) const;

  std::vector<ChakraRank> trace_;
  std::vector<RankPlan> plans_;
  ChakraOptions options_;
  double flops_ = 0, hbm_ = 0;
  std::vector<ChakraCollective> collectives_;
  std::vector<std::vector<std::vector<Contribution>>> finals_;  // [collective][rank]
  std::vector<std::string> p2p_errors_;                         // per rank: the first wrong receive
  std::vector<std::uint64_t> p2p_wrong_;
  std::optional<double> reduce_rate_;
  std::size_t nodes_ = 0, ignored_deps_ = 0;
  Progress* progress_ = nullptr;
  std::vector<std::size_t> ended_;  // per rank: nodes ended in its current run
  std::size_t ended_all_ = 0;
  double critical_path_s_ = 0;
};

}  // namespace ultrasim
