// A Chakra execution trace (workloads/chakra_trace.hpp) as the program its chips run: rank r of the trace
// on chip r. Each rank runs its nodes one at a time, in an order that honours every data and control
// dependency (Kahn's, the smallest ready id first):
//   COMP_NODE       compute for its duration (duration_micros, else "runtime"), else the chip's roofline:
//                   max(num_ops / (chip_flops x compute_efficiency), tensor_size / hbm_bandwidth);
//   COMM_SEND_NODE  a send of comm_size bytes to comm_dst labelled comm_tag, waited until it has left;
//   COMM_RECV_NODE  a receive from comm_src labelled comm_tag, waited until it has arrived;
//   COMM_COLL_NODE  the collective comm_type of comm_size bytes on its process group (pg_name; none:
//                   every rank) through one of ultrasim's algorithms (verified like any run). BARRIER is
//                   an all-reduce of one 4-byte element;
//   METADATA_NODE   nothing.
// The k-th collective a rank runs on a group is the k-th of every member: they must agree on the
// collective and its size. What this leaves out: a rank's nodes never overlap (ASTRA-sim runs compute and
// communication on separate streams), and a send completes when its data has left, not when it arrives.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectives/algorithm.hpp"
#include "collectives/collective.hpp"
#include "workloads/chakra_trace.hpp"
#include "workloads/program.hpp"

namespace ultrasim {

struct ChakraOptions {
  // Per collective (allreduce, alltoall, ...; "*": every other): an algorithm, or "auto" (the default):
  // the lowest model_s on the group among the algorithms that run on it.
  std::map<std::string, std::string> algorithms;
  // Process groups by name, over the trace's own (GlobalMetadata attributes "pg:NAME").
  std::map<std::string, std::vector<int>> groups;
};

// One collective of the trace: the k-th on a group, as every member runs it.
struct ChakraCollective {
  std::string group;  // "" : every rank
  int index = 0;      // k
  const CollectiveInfo* info = nullptr;
  std::string algorithm;  // the name chosen
  std::unique_ptr<Algorithm> run;
  std::vector<int> members;  // ranks, ascending
  std::uint64_t bytes = 0;
  int started = 0;  // members whose trace has it
};

class ChakraStep : public Program {
 public:
  // Throws InputError (one line naming the file and the node) when ranks disagree on a collective, a node
  // depends on a node its rank does not have or on itself through a cycle, a peer or group member is not a
  // rank, or a rank is missing from a collective of its group.
  ChakraStep(std::vector<ChakraRank> trace, const Machine& machine, const ParamSet& params,
             const ChakraOptions& options);
  bool takes_part(int rank) const override { return rank < static_cast<int>(order_.size()); }
  void run(Transport& transport) override;
  Verdict verdict() const override;
  int ranks() const { return static_cast<int>(order_.size()); }
  double compute_s(int rank) const { return compute_s_.at(rank); }  // its compute nodes' time
  std::size_t nodes() const { return nodes_; }
  const std::vector<ChakraCollective>& collectives() const { return collectives_; }

 private:
  struct Step {
    const ChakraNode* node = nullptr;
    double compute_s = 0;
    int collective = -1;  // index into collectives_
  };
  std::vector<ChakraRank> trace_;
  std::vector<std::vector<Step>> order_;  // per rank, in the order it runs them
  std::vector<double> compute_s_;
  std::vector<ChakraCollective> collectives_;
  std::vector<std::vector<std::vector<Contribution>>> finals_;  // [collective][rank]
  std::vector<std::string> p2p_errors_;                         // per rank: the first wrong receive
  std::vector<std::uint64_t> p2p_wrong_;
  std::optional<double> reduce_rate_;
  std::size_t nodes_ = 0;
};

}  // namespace ultrasim
