// The ping-pong workload: two chips send one message back and forth, as osu_latency and nccl-tests'
// sendrecv measure a pair of devices: the one-way time and bandwidth between them on this fabric.
//
//   {"workload": "pingpong", "topology": "trn3", "src": 0, "dst": 143, "size": "64MiB", "set": {...}}
//
// src (default 0) sends `size` bytes to dst (default the last chip), which sends them back once they
// have arrived; no other chip takes part. model_s is the round trip's α-β time,
// α(src,dst) + n/β(src,dst) + α(dst,src) + n/β(dst,src): exact, since one flow is in flight at a time.
// The verdict: each message arrived whole, with its sender's content.
#include <sstream>

#include "sim/analysis/report.hpp"
#include "sim/analysis/trace.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/options.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/units.hpp"
#include "workloads/collective/collective_job.hpp"
#include "workloads/registry.hpp"
#include "workloads/workload_file.hpp"

namespace ultrasim {
namespace {

struct PingPongConfig {
  std::string topology;
  int src = 0, dst = -1;  // -1: the last chip
  std::uint64_t bytes = 0;
  std::string engine = "auto";
  std::vector<std::pair<std::string, std::string>> overrides;
};
using PingPongOption = Option<PingPongConfig>;

// A chip index (src, dst): a JSON integer from 0 to 2^30; whether the fabric has it is checked once built.
PingPongOption pingpong_chip_option(std::string name, int PingPongConfig::*chip, std::string meaning,
                                    std::string source) {
  PingPongOption o{std::move(name), "chip index >= 0", std::move(meaning), std::move(source)};
  o.set = [chip](PingPongConfig& c, const nlohmann::json& v, const std::string& where) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 1 << 30)
      throw InputError(where + " must be a chip index >= 0");
    c.*chip = v.get<int>();
  };
  o.value = [chip](const PingPongConfig& c) { return nlohmann::json(c.*chip); };
  return o;
}

// The message size: a whole number of bytes, or a string with units ("64MiB"), at most 2^53 bytes.
PingPongOption pingpong_size_option() {
  PingPongOption o{"size", "a size: bytes, or a string such as \"64MiB\"", "bytes each way", "required"};
  o.required = true;
  o.set = [](PingPongConfig& c, const nlohmann::json& v, const std::string& where) {
    if (!v.is_number_unsigned() && !v.is_string())
      throw InputError(where + " must be a whole number of bytes or a string such as \"64MiB\"");
    try {
      // A JSON integer over 2^53 is refused as a string would be (parse_bytes reads it exactly).
      c.bytes = v.is_string() ? parse_bytes(v.get<std::string>()) : checked_bytes(v.get<std::uint64_t>());
    } catch (const InputError& e) {
      throw InputError(where + ": " + e.what());
    }
  };
  o.value = [](const PingPongConfig& c) { return nlohmann::json(c.bytes); };
  return o;
}

// The topology the chips are on: a spec, not empty.
PingPongOption pingpong_topology_option() {
  PingPongOption o{"topology", "a topology spec", "the topology the chips are on", "required"};
  o.required = true;
  o.set = [](PingPongConfig& c, const nlohmann::json& v, const std::string& where) {
    c.topology = option_text(v, where);
    if (c.topology.empty()) throw InputError(where + " must be a topology spec, not \"\"");
  };
  o.value = [](const PingPongConfig& c) { return nlohmann::json(c.topology); };
  return o;
}

// The engine: one of `ultrasim list engines`, checked as it is read (parse_engine's "unknown engine").
PingPongOption pingpong_engine_option() {
  return engine_option<PingPongConfig>(&PingPongConfig::engine,
                                       "contention-free where it proves exact, else flow, else SimGrid");
}

// The ping-pong file's fields, each declared once; besides them a file may have workload, description
// and set (the parameters, set_overrides).
const OptionTable<PingPongConfig>& pingpong_options() {
  static const OptionTable<PingPongConfig> table = [] {
    OptionTable<PingPongConfig> t;
    t.push_back(pingpong_topology_option());
    t.push_back(pingpong_chip_option("src", &PingPongConfig::src, "the chip that sends first", "chip 0"));
    t.push_back(pingpong_chip_option("dst", &PingPongConfig::dst, "the chip that answers (-1: the last)",
                                     "the last chip"));
    t.push_back(pingpong_size_option());
    t.push_back(pingpong_engine_option());
    return t;
  }();
  return table;
}

PingPongConfig pingpong_config_from_json(const nlohmann::json& w, const std::string& file) {
  const std::string where = "workload file '" + file + "'";
  PingPongConfig c;
  read_options(pingpong_options(), w, where, {"workload", "description", "set"}, c);
  c.overrides = set_overrides(w, where);
  return c;
}

// The program: ping from src, pong from dst, each message carrying its sender's contribution.
class PingPong : public Program {
 public:
  PingPong(int src, int dst, std::uint64_t bytes) : src_(src), dst_(dst), bytes_(bytes) {}
  bool takes_part(int rank) const override { return rank == src_ || rank == dst_; }
  void run(Transport& t) override {
    const bool pinger = t.rank() == src_;
    const int peer = pinger ? dst_ : src_;
    for (int step = 0; step < 2; ++step) {
      if ((step == 0) == pinger) {
        t.wait_all({t.send(peer, Message{{Piece{0, bytes_, contribution_of(t.rank(), 0)}}}, step)});
      } else {
        RequestPtr in = t.recv(peer, step);
        t.wait_all({in});
        got_[step] = in->message;
      }
    }
  }
  Verdict verdict() const override {
    Verdict v;
    for (int step = 0; step < 2; ++step) {
      const int sender = step == 0 ? src_ : dst_;
      const Message& m = got_[step];
      if (m.bytes() == bytes_ && m.pieces.size() == 1 && m.pieces[0].content == contribution_of(sender, 0))
        continue;
      if (v.wrong++ == 0)
        v.first_error = std::string(step == 0 ? "ping" : "pong") + " from chip" + std::to_string(sender) +
                        " arrived as " + std::to_string(m.bytes()) + " bytes, expected " +
                        std::to_string(bytes_);
    }
    return v;
  }

 private:
  int src_, dst_;
  std::uint64_t bytes_;
  Message got_[2];
};

// Runs it; with a `trace` path, writes the run's trace there.
nlohmann::ordered_json run_pingpong(const PingPongConfig& c, const std::string& command,
                                    const std::string& trace) {
  // No parameters of its own: the topology's and the model's.
  Machine machine = build_machine(c.topology, c.overrides, {}, false);
  const int p = machine.p(), dst = c.dst < 0 ? p - 1 : c.dst;
  if (c.src >= p || dst >= p || c.src == dst)
    throw InputError("pingpong: src " + std::to_string(c.src) + " and dst " + std::to_string(dst) +
                     " must be two different chips of the " + std::to_string(p) + " on " + c.topology);
  PingPong program(c.src, dst, c.bytes);
  std::unique_ptr<OutputFile> trace_file;
  if (!trace.empty()) trace_file = std::make_unique<OutputFile>(trace, "trace");
  RunOptions options;
  options.engine = parse_engine(c.engine);
  options.record = trace_file != nullptr;
  const SimResult result = simulate(machine, program, options);
  const CostInput in = machine.cost_input_of(c.bytes);
  const double n = static_cast<double>(c.bytes), one_way = result.time_s / 2;
  nlohmann::ordered_json out = workload_result(command, "pingpong", c.topology, p);
  out["src"] = c.src;
  out["dst"] = dst;
  out["bytes"] = c.bytes;
  out["round_trip_s"] = result.time_s;
  out["one_way_s"] = one_way;
  out["bandwidth_GBps"] = one_way > 0 ? nlohmann::ordered_json(n / one_way / 1e9) : nlohmann::ordered_json();
  out["model_s"] = in.alpha(c.src, dst) + n / in.bandwidth(c.src, dst) + in.alpha(dst, c.src) +
                   n / in.bandwidth(dst, c.src);
  out["hops"] = machine.routes->between(c.src, dst).hops.size();
  close_workload_result(out, result.verdict.wrong, result.verdict.first_error, result,
                        machine.topology->params());
  if (trace_file) {
    write_chrome_trace(*trace_file, *machine.topology, result, nullptr, nlohmann::json::parse(json_text(out)),
                       TraceOptions{});
    trace_file->close();
  }
  return out;
}

std::string pingpong_table(const nlohmann::ordered_json& r) {
  std::ostringstream out;
  out << "# ping-pong on " << r["topology"].get<std::string>() << ": chip" << r["src"] << " <-> chip"
      << r["dst"] << " (" << r["hops"] << " hops), " << r["bytes"] << " bytes\n";
  out << "one way         " << fixed_text(r["one_way_s"].get<double>() * 1e6, 3) << " us   (round trip "
      << fixed_text(r["round_trip_s"].get<double>() * 1e6, 3) << " us, model "
      << fixed_text(r["model_s"].get<double>() * 1e6, 3) << " us)\n";
  out << "bandwidth       "
      << fixed_text(r["bandwidth_GBps"].is_null() ? 0.0 : r["bandwidth_GBps"].get<double>(), 2) << " GB/s\n";
  out << "verified        " << (r["verified"].get<bool>() ? "yes" : "NO") << "\n";
  return out.str();
}

}  // namespace

WorkloadKind pingpong_workload() {
  return {"pingpong",
          "two chips send a message back and forth: one-way time and bandwidth between them",
          "",
          {"one_way_s", "round_trip_s", "bandwidth_GBps", "model_s", "hops", "verified"},
          {"table", "json"},
          [](const nlohmann::json& w, const std::string& file) { pingpong_config_from_json(w, file); },
          [](const nlohmann::json& w, const std::string& file, const WorkloadOutput& output) {
            return print_workload_result(
                run_pingpong(pingpong_config_from_json(w, file), output.command, output.trace), output.format,
                pingpong_table);
          }};
}

}  // namespace ultrasim
