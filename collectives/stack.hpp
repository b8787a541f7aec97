// Software stacks: what a communication library adds to the fabric. A topology says what the hardware is;
// a stack says what the library running on it costs. Each protocol of a stack has
//   - launch_latency: paid once per collective, before any chip sends (NCCL's base latency);
//   - step_latency: added to every transfer (NCCL's per-step hardware latency: one per ring step);
//   - network_step_latency: added to every transfer between two scale-up domains (cluster:K:PRESET),
//     on top of step_latency (NCCL's network hwLat, Neuron's EFA hop);
//   - efficiency: the fraction of a link's delivered rate its payload gets (LL's flags, LL128's lines);
//   - channels (optional): {"count": C, "bytes": B, "bytes_per_rank": b}: the library opens C channels
//     (concurrent pipelines) at full size but one per B + b x p bytes of the message below that (NCCL:
//     threads x its thread threshold), so a small message gets share() of the links' rate.
// A run uses one protocol: `protocol=NAME`, or with `protocol=auto` the one whose model_s is lowest at the
// run's size (with the algorithm, when that is `auto` too), as NCCL's tuner picks. Built-in stacks are the
// JSON files of collectives/stacks/, compiled into the binary; a FILE.json of the same form is a stack too.
// Every number carries its source in the file.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ultrasim {

struct Protocol {
  std::string name;
  double launch_latency = 0;                          // s, once per collective
  std::map<std::string, double> launch_by_algorithm;  // s, where an algorithm has its own (NCCL's NVLS)
  double step_latency = 0;                            // s, per transfer
  double network_step_latency = 0;    // s, per transfer between scale-up domains, on top of step_latency
  double efficiency = 1;              // payload fraction of the delivered link rate, (0, 1]
  std::vector<std::string> excludes;  // algorithms it cannot run (NCCL: NVLS only with Simple)
  int channels = 0;                   // 0: not modelled (every message gets the whole rate)
  double channel_bytes = 0, channel_bytes_per_rank = 0;  // the least a channel carries: B + b x p
  std::string source;
  double launch_for(const std::string& algorithm) const {
    const auto it = launch_by_algorithm.find(algorithm);
    return it == launch_by_algorithm.end() ? launch_latency : it->second;
  }
  // The channels a message of `bytes` on `p` chips opens: min(C, max(1, floor(bytes / (B + b p)))); C
  // without a size (bytes 0: not a collective); 0 without channels.
  int open_channels(std::uint64_t bytes, int p) const {
    if (channels <= 0 || bytes == 0) return channels > 0 ? channels : 0;
    const double least = channel_bytes + channel_bytes_per_rank * p;
    const double open = least > 0 ? std::floor(static_cast<double>(bytes) / least) : channels;
    return static_cast<int>(std::clamp(open, 1.0, static_cast<double>(channels)));
  }
  // The fraction of the links' rate `open` of its channels get: open / C (1 without channels).
  double share(int open) const { return channels > 0 ? static_cast<double>(open) / channels : 1.0; }
  bool runs(const std::string& algorithm) const {
    return std::find(excludes.begin(), excludes.end(), algorithm) == excludes.end();
  }
};

struct Stack {
  std::string name;         // "nccl"; a file's own "name"
  std::string description;  // one line
  std::string origin;       // "built-in" or the file's path
  std::vector<Protocol> protocols;
  // The algorithms the library has, per collective: what `--algorithm auto` chooses among (NCCL: ring,
  // tree, NVLS). A collective it does not list: every algorithm of the catalogue.
  std::map<std::string, std::vector<std::string>> algorithms;
  std::string algorithms_source;  // with `algorithms`
  bool offers(const std::string& collective, const std::string& algorithm) const;
  // The protocol called `name`; throws InputError ("did you mean") naming the stack.
  const Protocol& protocol(const std::string& name) const;
  nlohmann::json to_json() const;  // as the stack file reads, values in base units (s)
  // The stack as a stack file: every field, latencies in seconds written so that they read back as the
  // same doubles (parse_stack of it gives an equal to_json()).
  std::string file_text() const;
};

// The built-in stacks, in the order `ultrasim list stacks` shows them (ideal first).
const std::vector<Stack>& builtin_stacks();
// A built-in stack by name, or a stack file when `name` ends in ".json". Throws InputError for an unknown
// name ("did you mean") and for a file that is unreadable or not a stack (naming the file and the field).
Stack find_stack(const std::string& name);
// Reads a stack from JSON text; `where` names it in errors.
Stack parse_stack(const std::string& text, const std::string& where, const std::string& origin);

}  // namespace ultrasim
