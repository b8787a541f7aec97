// Chakra execution traces (mlcommons/chakra; the schema: workloads/chakra/et_def.proto), as ultrasim reads
// them: one file per rank, PREFIX.<rank>.et (or .et.gz), holding a GlobalMetadata message and then Node
// messages, each after its length as a varint32. Free of SimGrid and of protobuf's types: the reader
// returns plain structs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ultrasim {

// The node types ultrasim runs (Chakra's NodeType numbers); any other is an InputError naming it.
enum class ChakraNodeType {
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kCompute = 4,
  kSend = 5,
  kRecv = 6,
  kCollective = 7
};

struct ChakraNode {
  std::uint64_t id = 0;
  std::string name;
  ChakraNodeType type = ChakraNodeType::kCompute;
  std::vector<std::uint64_t> deps;  // data dependencies, then control ones: ids of this rank's nodes
  std::size_t data_deps = 0;        // how many of `deps` are data dependencies
  double duration_s = 0;            // duration_micros, or the attribute "runtime" (microseconds)
  double num_ops = 0;               // "num_ops": FLOPs (a compute node without a duration)
  double tensor_bytes = 0;          // "tensor_size": bytes it reads and writes (the roofline's memory side)
  bool cpu_op = false;              // "is_cpu_op": runs on the host, not the chip's compute stream
  std::string collective;           // ultrasim's name of "comm_type": allreduce, alltoall, ... ("" if none)
  std::uint64_t bytes = 0;          // "comm_size", as the trace says it (ASTRA-sim's convention by default)
  bool sized = false;               // the trace gave comm_size
  int peer = -1;                    // "comm_src" of a receive, "comm_dst" of a send
  int tag = 0;                      // "comm_tag"
  std::string group;                // "pg_name" ("" and "0": every rank, as ASTRA-sim reads them)
  std::vector<bool> involved_dim;   // "involved_dim": the network dimensions it spans (empty: all)
};

struct ChakraRank {
  std::string file;
  std::vector<ChakraNode> nodes;  // in file order
  // Process groups the trace names: a GlobalMetadata attribute "pg:NAME" listing the ranks of group NAME,
  // and PyTorch's process-group metadata node (a METADATA_NODE whose attribute "pg" holds JSON).
  std::map<std::string, std::vector<int>> groups;
};

// Reads PREFIX.0.et, PREFIX.1.et, ... (each may be .et.gz) until the next rank's file is missing. Throws
// InputError (one line naming the file, and the node where there is one) for no file at all, a file that
// is not a Chakra trace (a truncated message, a length beyond the file), a node type or collective ultrasim
// does not run, or a file beyond `max_bytes` (after decompression).
std::vector<ChakraRank> read_chakra_trace(const std::string& prefix, std::uint64_t max_bytes = 1ull << 30);

// One rank's file (as above); `rank` names it in errors.
ChakraRank read_chakra_rank(const std::string& path, std::uint64_t max_bytes = 1ull << 30);

}  // namespace ultrasim
