// The table of topology generators: `ultrasim list topologies`, spec lookup and "did you mean" all read it.
// Adding a generator = one file defining its entry function + one row in registry.cpp (CMakeLists.txt
// compiles every .cpp of the folder).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "topology/base/param_table.hpp"
#include "topology/base/params.hpp"
#include "topology/topology.hpp"

namespace ultrasim {

struct GeneratorEntry {
  std::string name;         // the NAME of a spec NAME[:ARGS]
  std::string syntax;       // "switch:N"
  std::string description;  // one line
  std::vector<ParamSpec> params;
  // Builds the topology from the spec's ARGS (text after ':', "" if none) and the parameters in effect
  // (this entry's params with any overrides). Throws InputError on bad arguments.
  std::function<Topology(const std::string& spec, const std::string& args, const ParamSet& params)> build;
  // A spec that builds with the defaults ("torus:4x4"); empty: the name alone is one. Tests and
  // `ultrasim list` use it to run every generator.
  std::string example = {};
  // The spec `ultrasim list` and the tests show for it: `example`, or the bare name.
  std::string example_spec() const { return example.empty() ? name : example; }
  // Exact bisection bandwidth (B/s per direction, delivered) of a built topology where a formula exists;
  // empty or returning nullopt: the summary computes a min cut instead and says so.
  std::function<std::optional<double>(const Topology&)> bisection = {};
  // Parameters a spec declares beyond `params`, given its ARGS (cluster:K:PRESET: its PRESET's, so that
  // they stay settable with --set); empty: none. Throws InputError on ARGS it cannot read.
  std::function<std::vector<ParamSpec>(const std::string& args)> extra_params = {};
  // The software stack its topologies run under unless the run names one (collectives/stack.hpp): the
  // vendor library of a preset; "ideal" (the fabric alone) for the generic generators.
  std::string stack = "ideal";
};

const std::vector<GeneratorEntry>& topology_generators();
// Throws InputError "unknown topology 'X'; did you mean ...".
const GeneratorEntry& find_generator(const std::string& name);

// Splits "SPEC@CHIPS" (a part of a fabric: only CHIPS, a list such as 0-71, are its chips) into {SPEC,
// CHIPS}; a spec without a trailing "@LIST" into {spec, ""}.
std::pair<std::string, std::string> split_chip_selection(const std::string& spec);

// Splits "torus:4x4" into {"torus", "4x4"} (and "torus:4x4@0-7" alike: the chips are left out).
std::pair<std::string, std::string> split_topology_spec(const std::string& spec);

// Every parameter a spec declares: its generator's `params`, then its `extra_params` for the spec's ARGS.
// Throws InputError for an unknown generator ("did you mean") or ARGS the generator cannot read.
std::vector<ParamSpec> generator_params(const std::string& spec);

// Parses a spec, declares the generator's parameters plus `extra` ones (the model's), applies the
// overrides and builds the validated topology. An override of a name it does not declare is an InputError
// whose "did you mean" also considers `owned_elsewhere` (the names an algorithm or workload declares,
// which callers take out of `overrides` first).
Topology make_topology(const std::string& spec, const std::vector<ParamSpec>& extra,
                       const std::vector<std::pair<std::string, std::string>>& overrides,
                       const std::vector<std::string>& owned_elsewhere = {});

// The in-switch reduction parameters as every reader sees them: switch_reduction (bool, false) and
// switch_reduce_bandwidth (an optional rate, inf: line rate). A topology that does not declare them has
// no switch that reduces.
struct SwitchReduce {
  bool declared = false;       // the topology declares switch_reduction
  bool on = false;             // switch_reduction
  std::optional<double> rate;  // switch_reduce_bandwidth; nullopt: line rate (free)
};
// Their declarations, named, typed and defaulted once for every topology whose switches may reduce, each
// with the topology's own meaning and source (both optional: read() leaves the defaults where a
// topology lacks them).
ParamTable<SwitchReduce> switch_reduce_table(const std::string& meaning, const std::string& source,
                                             const std::string& rate_meaning, const std::string& rate_source);
// The same from the two declarations themselves, as switch_reduction_param and
// switch_reduce_bandwidth_param make them (a preset that changes their defaults: nvlink_table).
ParamTable<SwitchReduce> switch_reduce_table(ParamSpec reduction, ParamSpec rate);
ParamSpec switch_reduction_param(const std::string& meaning, const std::string& source);
ParamSpec switch_reduce_bandwidth_param(const std::string& meaning, const std::string& source);
// A topology's in-switch reduction parameters.
SwitchReduce switch_reduce_of(const ParamSet& params);

// Parameters shared by the generic generators (switch, ring, torus, mesh, clos, fattree, dragonfly):
// link_bandwidth is the raw line rate; what is simulated is link_bandwidth x link_efficiency.
struct SimpleLinks {
  double bandwidth = 0;   // link_bandwidth, B/s per direction (raw)
  double efficiency = 1;  // link_efficiency
  double latency = 0;     // link_latency, s
  double switch_latency = 0;
  SwitchReduce reduce;
};
const ParamTable<SimpleLinks>& simple_link_table();
std::vector<ParamSpec> simple_link_params();  // simple_link_table().specs()

// The number a kChoice value stands for where its choices admit "N" ("auto" or N), as ParamSet::number
// reads it: the count for a number ("4"), 0 for a word.
long choice_count(const std::string& value);

// Whether a topology's switches reduce and multicast: its switch_reduction; a topology that does not
// declare it has none that do (the one rule the bound and switch-reduce share).
bool switches_reduce(const ParamSet& params);
// Throws InputError "ALGORITHM needs reduction-capable switches; topology T has ..." (saying how to turn
// them on, or that it has none) unless the topology's switches reduce.
void require_reducing_switches(const Topology& topology, const std::string& algorithm);

// NVLS's warm-up on a preset: measured NVLS bus bandwidth approaches its plateau far more slowly than
// its launch latency explains (8 x H100: 234 GB/s at 16 MiB, 423 at 256 MiB, 479 at 8 GiB), which neither
// the fabric nor NCCL's published model accounts for. The nvls algorithm charges the first `bytes` of each
// GPU's buffer 1/`rate` each of chip time before its planes start: min(bytes, warm-up bytes) / rate, a
// cost that grows with the size up to a cap. Empirical; fitted per preset (results/validation/).
// NvlsWarmup: a preset's defaults of nvls_warmup_bytes and nvls_warmup_bandwidth, as typed, with their
// source; NvlsParams: the values in effect.
struct NvlsWarmup {
  std::string bytes = "0", rate = "inf", source;
};
struct NvlsParams {
  double warmup_bytes = 0;            // nvls_warmup_bytes
  std::optional<double> warmup_rate;  // nvls_warmup_bandwidth; nullopt: no warm-up (inf)
};
// Their declarations with a preset's defaults and source (both optional: read() leaves NvlsParams'
// defaults, no warm-up, where a topology lacks them).
ParamTable<NvlsParams> nvls_table(const NvlsWarmup& warmup);
// A topology's NVLS warm-up: its nvls_warmup_bytes and nvls_warmup_bandwidth, or none (0 bytes, nullopt)
// where it does not declare them.
NvlsParams nvls_of(const ParamSet& params);

// NVLink parameters shared by nvl72 and hgx-h100, typed; nvlink_table() (nvl72_topology.cpp) declares them.
struct NvlinkParams {
  double bandwidth = 0;       // nvlink_bandwidth: raw, per link, per direction
  double latency = 0;         // nvlink_latency: GPU to NVSwitch
  double efficiency = 1;      // nvlink_efficiency
  double switch_latency = 0;  // switch_latency: crossing an NVSwitch chip
  SwitchReduce reduce;        // switch_reduction (on by default) and switch_reduce_bandwidth (NVLS's rate)
  NvlsParams nvls;            // nvls_warmup_bytes and nvls_warmup_bandwidth
};
// Their declarations, in this order: nvlink_bandwidth (default `link_rate`, with its source),
// nvlink_latency, nvlink_efficiency (with its source), switch_latency, switch_reduction,
// switch_reduce_bandwidth (default `engine_rate`, NVLS's rate per NVSwitch chip, with its source), then
// nvls_warmup_bytes and nvls_warmup_bandwidth (defaults `warmup`).
ParamTable<NvlinkParams> nvlink_table(const std::string& link_rate, const std::string& rate_source,
                                      const std::string& efficiency_source, const std::string& engine_rate,
                                      const std::string& engine_source, const NvlsWarmup& warmup);

}  // namespace ultrasim
