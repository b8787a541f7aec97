#include "workloads/chakra/chakra_trace.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "et_def.pb.h"  // generated from workloads/chakra/et_def.proto into the build folder
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"

namespace ultrasim {
namespace {

namespace pb = ChakraProtoMsg;

// A trace file as protobuf reads it, streamed: gunzipped when it is gzip (zlib reads plain files as they
// are), and never more than `max` bytes uncompressed, so a small gzip of zeros is refused at its first
// message, not after inflating a gigabyte.
class TraceStream : public google::protobuf::io::CopyingInputStream {
 public:
  TraceStream(const std::string& path, std::uint64_t max) : path_(path), max_(max) {
    check_input_file(path, "Chakra trace '" + path + "'", "a Chakra execution trace (.et or .et.gz)");
    in_ = gzopen(path.c_str(), "rb");
    if (in_ == nullptr) throw InputError("cannot read Chakra trace '" + path + "'");
    gzbuffer(in_, 1 << 16);
  }
  ~TraceStream() override { gzclose(in_); }
  TraceStream(const TraceStream&) = delete;
  TraceStream& operator=(const TraceStream&) = delete;

  int Read(void* buffer, int size) override {
    if (read_ > max_) return -1;
    const int n = gzread(in_, buffer, static_cast<unsigned>(size));
    if (n < 0) failed_ = true;
    if (n == 0) ended_ = true;
    read_ += n > 0 ? static_cast<std::uint64_t>(n) : 0;
    return read_ > max_ ? -1 : n;  // past the cap: a read error, which stops the parse
  }
  // InputError if reading stopped at the cap or at a broken gzip.
  void check() const {
    const std::string where = "Chakra trace '" + path_ + "'";
    if (read_ > max_)
      throw InputError(where + ": more than " + std::to_string(max_ >> 20) +
                       " MiB (uncompressed); ultrasim reads traces up to that size");
    if (failed_) throw InputError(where + ": not a readable gzip file");
  }
  // For a parse that failed: InputError for the cap, a broken gzip, or the end of the file inside a
  // message of `size` bytes; nothing if the bytes were there (the message itself is wrong).
  void explain(std::uint32_t size) const {
    check();
    if (ended_)
      throw InputError("Chakra trace '" + path_ + "': a message of " + std::to_string(size) +
                       " bytes runs past the end of the file");
  }

 private:
  std::string path_;
  std::uint64_t max_, read_ = 0;
  gzFile in_ = nullptr;
  bool failed_ = false, ended_ = false;
};

// Reads the next length-delimited message into `message`; false at the end of the data.
bool next_message(google::protobuf::io::CodedInputStream& in, const TraceStream& stream,
                  google::protobuf::Message& message, const std::string& where) {
  const void* next = nullptr;
  int buffered = 0;
  if (!in.GetDirectBufferPointer(&next, &buffered)) {  // no byte left: the end, unless reading failed
    stream.check();
    return false;
  }
  std::uint32_t size = 0;
  if (!in.ReadVarint32(&size)) {
    stream.explain(0);
    throw InputError(where + ": a message length is cut short");
  }
  const auto limit = in.PushLimit(static_cast<int>(std::min<std::uint32_t>(size, INT32_MAX)));
  if (!message.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage() || in.BytesUntilLimit() > 0) {
    stream.explain(size);
    throw InputError(where + ": a message that is not a Chakra " + message.GetTypeName());
  }
  in.PopLimit(limit);
  return true;
}

// An attribute's value as a number (any integer or floating field), or nullopt.
std::optional<double> number_of(const pb::AttributeProto& a) {
  switch (a.value_case()) {
    case pb::AttributeProto::kDoubleVal:
      return a.double_val();
    case pb::AttributeProto::kFloatVal:
      return a.float_val();
    case pb::AttributeProto::kInt32Val:
      return a.int32_val();
    case pb::AttributeProto::kInt64Val:
      return static_cast<double>(a.int64_val());
    case pb::AttributeProto::kUint32Val:
      return a.uint32_val();
    case pb::AttributeProto::kUint64Val:
      return static_cast<double>(a.uint64_val());
    case pb::AttributeProto::kSint32Val:
      return a.sint32_val();
    case pb::AttributeProto::kSint64Val:
      return static_cast<double>(a.sint64_val());
    case pb::AttributeProto::kFixed32Val:
      return a.fixed32_val();
    case pb::AttributeProto::kFixed64Val:
      return static_cast<double>(a.fixed64_val());
    case pb::AttributeProto::kSfixed32Val:
      return a.sfixed32_val();
    case pb::AttributeProto::kSfixed64Val:
      return static_cast<double>(a.sfixed64_val());
    case pb::AttributeProto::kBoolVal:
      return a.bool_val() ? 1.0 : 0.0;
    default:
      return std::nullopt;
  }
}

// ultrasim's collective for Chakra's comm_type (BARRIER: an all-reduce of one element).
std::string collective_of(double comm_type, const std::string& where) {
  switch (static_cast<int>(comm_type)) {
    case pb::ALL_REDUCE:
      return "allreduce";
    case pb::REDUCE:
      return "reduce";
    case pb::ALL_GATHER:
      return "allgather";
    case pb::BROADCAST:
      return "broadcast";
    case pb::ALL_TO_ALL:
      return "alltoall";
    case pb::REDUCE_SCATTER:
      return "reducescatter";
    case pb::BARRIER:
      return "barrier";
    default:
      throw InputError(where + ": comm_type " + std::to_string(static_cast<long>(comm_type)) +
                       " is not a collective ultrasim runs (ALL_REDUCE, REDUCE, ALL_GATHER, BROADCAST, "
                       "ALL_TO_ALL, REDUCE_SCATTER, BARRIER)");
  }
}

// PyTorch's process-group metadata node (a METADATA_NODE named "## process_group:init ##", as Chakra's
// converter writes it): its inputs' values are a Python list holding one JSON list of groups, each
// {"pg_name": NAME, "ranks": [...] (empty: every rank), ...}. Adds them to `groups`.
void read_process_groups(const pb::Node& n, const std::string& where,
                         std::map<std::string, std::vector<int>>& groups) {
  std::string text = n.inputs().values();
  if (text.starts_with("['") && text.ends_with("']")) text = text.substr(2, text.size() - 4);
  const nlohmann::json list = nlohmann::json::parse(text, nullptr, false);
  if (!list.is_array())
    throw InputError(where + ": a process_group:init node whose inputs are not a JSON list of groups");
  for (const nlohmann::json& g : list) {
    if (!g.is_object() || !g.contains("pg_name") || !g["pg_name"].is_string() || !g.contains("ranks") ||
        !g["ranks"].is_array())
      throw InputError(where + ": a process group without a pg_name string and a ranks list");
    std::vector<int> ranks;
    for (const nlohmann::json& r : g["ranks"]) {
      if (!r.is_number_unsigned() || r.get<std::uint64_t>() >= (1u << 24))
        throw InputError(where + ": process group '" + g["pg_name"].get<std::string>() +
                         "' lists a rank that is not a whole number below 2^24");
      ranks.push_back(r.get<int>());
    }
    const std::string name = g["pg_name"].get<std::string>();
    if (name != "0" && !name.empty()) groups[name] = std::move(ranks);  // "0": every rank
  }
}

// ChakraNodeType's values are Chakra's NodeType numbers: the node's type, if ultrasim runs it.
ChakraNodeType type_of(const pb::Node& n, const std::string& where) {
  switch (n.type()) {
    case pb::METADATA_NODE:
    case pb::MEM_LOAD_NODE:
    case pb::MEM_STORE_NODE:
    case pb::COMP_NODE:
    case pb::COMM_SEND_NODE:
    case pb::COMM_RECV_NODE:
    case pb::COMM_COLL_NODE:
      return static_cast<ChakraNodeType>(n.type());
    default:
      throw InputError(
          where + ": node type " + pb::NodeType_Name(n.type()) + " (" +
          std::to_string(static_cast<int>(n.type())) +
          ") is not one ultrasim runs (COMP_NODE, MEM_LOAD_NODE, MEM_STORE_NODE, COMM_SEND_NODE, "
          "COMM_RECV_NODE, COMM_COLL_NODE, METADATA_NODE)");
  }
}

// The attributes of `n` ultrasim reads, into `node`; returns comm_type if there is one.
std::optional<double> read_attributes(const pb::Node& n, ChakraNode& node, const std::string& where) {
  std::optional<double> comm_type;
  for (const pb::AttributeProto& a : n.attr()) {
    const std::string& key = a.name();
    if (key == "pg_name") {
      if (a.value_case() != pb::AttributeProto::kStringVal)
        throw InputError(where + ": pg_name must be a string");
      node.group = a.string_val() == "0" ? "" : a.string_val();  // ASTRA-sim: group 0 is every rank
      continue;
    }
    if (key == "involved_dim") {
      if (a.value_case() != pb::AttributeProto::kBoolList)
        throw InputError(where + ": involved_dim must be a bool list");
      node.involved_dim.assign(a.bool_list().values().begin(), a.bool_list().values().end());
      continue;
    }
    if (key == "is_cpu_op" || key == "comm_priority") {
      const std::optional<double> v = number_of(a);
      if (key == "is_cpu_op" && (!v || (*v != 0 && *v != 1)))
        throw InputError(where + ": is_cpu_op must be a bool");
      if (key == "comm_priority" && (!v || *v < 0 || *v > 4294967295.0 || *v != std::floor(*v)))
        throw InputError(where + ": comm_priority must be a whole number from 0 to 2^32 - 1");
      if (key == "is_cpu_op") node.cpu_op = *v == 1;
      continue;  // comm_priority orders chunks under ASTRA-sim's EXPLICIT policy only: nothing here
    }
    const std::optional<double> v = number_of(a);
    const bool known = key == "comm_type" || key == "comm_size" || key == "comm_src" || key == "comm_dst" ||
                       key == "comm_tag" || key == "num_ops" || key == "tensor_size" || key == "runtime";
    if (!known) continue;  // other attributes (op_type, is_cpu_op, ...) change nothing here
    if (!v || !std::isfinite(*v) || *v < 0 || *v > 9.007199254740992e15)
      throw InputError(where + ": attribute " + key + " must be a number from 0 to 2^53");
    if (key == "comm_type") comm_type = *v;
    if (key == "comm_size") node.bytes = static_cast<std::uint64_t>(*v), node.sized = true;
    if (key == "comm_src" && node.type == ChakraNodeType::kRecv)
      node.peer = static_cast<int>(std::min(*v, 1e9));
    if (key == "comm_dst" && node.type == ChakraNodeType::kSend)
      node.peer = static_cast<int>(std::min(*v, 1e9));
    if (key == "comm_tag") node.tag = static_cast<int>(std::min(*v, 1e9));
    if (key == "num_ops") node.num_ops = *v;
    if (key == "tensor_size") node.tensor_bytes = *v;
    if (key == "runtime" && node.duration_s == 0) node.duration_s = *v * 1e-6;
  }
  return comm_type;
}

ChakraNode node_of(const pb::Node& n, const std::string& file) {
  const std::string where =
      "Chakra trace '" + file + "': node " + std::to_string(n.id()) + " '" + n.name() + "'";
  ChakraNode node;
  node.id = n.id();
  node.name = n.name();
  node.type = type_of(n, where);
  node.deps.assign(n.data_deps().begin(), n.data_deps().end());
  node.data_deps = node.deps.size();
  node.deps.insert(node.deps.end(), n.ctrl_deps().begin(), n.ctrl_deps().end());
  node.duration_s = static_cast<double>(n.duration_micros()) * 1e-6;
  const std::optional<double> comm_type = read_attributes(n, node, where);
  const bool comm = node.type == ChakraNodeType::kSend || node.type == ChakraNodeType::kRecv ||
                    node.type == ChakraNodeType::kCollective;
  if (comm && node.cpu_op) {
    // The host's side of a communication (PyTorch's c10d call, which launches the kernel the trace has as
    // a node of its own): host time, its duration.
    node.type = ChakraNodeType::kCompute;
    node.peer = -1;
    return node;
  }
  if (comm && !node.sized)
    throw InputError(where + ": a " +
                     (node.type == ChakraNodeType::kCollective ? std::string("collective")
                      : node.type == ChakraNodeType::kSend     ? std::string("send")
                                                               : std::string("receive")) +
                     " needs the attribute comm_size (its bytes)");
  if (node.type == ChakraNodeType::kCollective) {
    if (!comm_type) throw InputError(where + ": a COMM_COLL_NODE needs the attribute comm_type");
    node.collective = collective_of(*comm_type, where);
  }
  if ((node.type == ChakraNodeType::kSend || node.type == ChakraNodeType::kRecv) && node.peer < 0)
    throw InputError(where + ": a " + std::string(node.type == ChakraNodeType::kSend ? "send" : "receive") +
                     " needs the attribute " +
                     (node.type == ChakraNodeType::kSend ? "comm_dst" : "comm_src"));
  if (node.tag >= (1 << 20)) throw InputError(where + ": comm_tag must be below 2^20");
  return node;
}

}  // namespace

ChakraRank read_chakra_rank(const std::string& path, std::uint64_t max_bytes) {
  GOOGLE_PROTOBUF_VERIFY_VERSION;
  TraceStream stream(path, max_bytes);
  google::protobuf::io::CopyingInputStreamAdaptor adaptor(&stream);
  const std::string where = "Chakra trace '" + path + "'";
  google::protobuf::io::CodedInputStream in(&adaptor);
  in.SetRecursionLimit(64);
  ChakraRank rank;
  rank.file = path;
  pb::GlobalMetadata metadata;
  if (!next_message(in, stream, metadata, where))
    throw InputError(where + ": empty (expected GlobalMetadata, then nodes)");
  for (const pb::AttributeProto& a : metadata.attr()) {
    if (!a.name().starts_with("pg:")) continue;
    std::vector<int> ranks;
    auto add = [&](auto values) {
      for (auto v : values) {
        if (v < 0 || v >= (1 << 24))
          throw InputError(where + ": process group " + a.name() + " lists rank " + std::to_string(v));
        ranks.push_back(static_cast<int>(v));
      }
    };
    if (a.value_case() == pb::AttributeProto::kInt64List)
      add(a.int64_list().values());
    else if (a.value_case() == pb::AttributeProto::kInt32List)
      add(a.int32_list().values());
    else if (a.value_case() == pb::AttributeProto::kUint64List)
      add(a.uint64_list().values());
    else
      throw InputError(where + ": process group " + a.name() + " must list its ranks as integers");
    rank.groups[a.name().substr(3)] = std::move(ranks);
  }
  pb::Node node;
  while (next_message(in, stream, node, where)) {
    rank.nodes.push_back(node_of(node, path));
    if (node.type() == pb::METADATA_NODE && node.name().find("process_group:init") != std::string::npos)
      read_process_groups(node, where + ": node " + std::to_string(node.id()), rank.groups);
    node.Clear();
  }
  return rank;
}

namespace {

// Ranks are read 0, 1, 2, ... up to the first file missing: a file of a higher rank beside it means a
// rank's file is lost (a partial copy), which would otherwise run as a smaller trace in silence.
void check_no_later_rank(const std::string& prefix, int missing) {
  const std::filesystem::path base(prefix);
  const std::filesystem::path dir = base.has_parent_path() ? base.parent_path() : ".";
  const std::string stem = base.filename().string() + ".";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(stem, 0) != 0) continue;
    std::string rest = name.substr(stem.size());
    for (const char* suffix : {".et.gz", ".et"})
      if (rest.size() > std::strlen(suffix) &&
          rest.compare(rest.size() - std::strlen(suffix), std::string::npos, suffix) == 0) {
        rest.resize(rest.size() - std::strlen(suffix));
        if (!rest.empty() && rest.size() < 9 && std::all_of(rest.begin(), rest.end(), ::isdigit) &&
            std::stoi(rest) > missing)
          throw InputError("Chakra trace '" + prefix + "': rank " + std::to_string(missing) + "'s file " +
                           prefix + "." + std::to_string(missing) + ".et is missing, but " +
                           (dir / name).string() + " is there (every rank from 0 needs its file)");
        break;
      }
  }
}

}  // namespace

std::vector<ChakraRank> read_chakra_trace(const std::string& prefix, std::uint64_t max_bytes) {
  std::vector<ChakraRank> ranks;
  for (int r = 0;; ++r) {
    const std::string plain = prefix + "." + std::to_string(r) + ".et";
    const std::string path = std::filesystem::exists(plain) ? plain : plain + ".gz";
    if (!std::filesystem::exists(path)) break;
    ranks.push_back(read_chakra_rank(path, max_bytes));
  }
  if (ranks.empty())
    throw InputError("Chakra trace '" + prefix + "': no file " + prefix + ".0.et (one file per rank, " +
                     prefix + ".<rank>.et or .et.gz)");
  check_no_later_rank(prefix, static_cast<int>(ranks.size()));
  return ranks;
}

}  // namespace ultrasim
