// The options of a Chakra trace run, declared once (topology/base/options.hpp): the "chakra" workload file's
// fields, and the flags of `ultrasim workload chakra:PREFIX` (kChakraFlagOptions; the trace, topology,
// engine, algorithms and groups have flags of their own there, shared with other workloads' refusals).
#include "collectives/collective.hpp"
#include "sim/engines/records.hpp"  // engine_option
#include "topology/base/units.hpp"
#include "workloads/chakra/chakra_run.hpp"
#include "workloads/collective/collective_job.hpp"

namespace ultrasim {
namespace {

using C = ChakraConfig;

// A bool of the trace's options chosen by one of two words ("overlap" or "serial").
Option<C> word_option(std::string name, bool ChakraOptions::*field, std::string on, std::string off,
                      bool on_by_default, std::string meaning, std::string source) {
  Option<C> o{std::move(name), on_by_default ? on + " | " + off : off + " | " + on, std::move(meaning),
              std::move(source)};
  o.set = [=](C& c, const nlohmann::json& v, const std::string& where) {
    c.options.*field =
        option_choice(v, where, on_by_default ? std::vector{on, off} : std::vector{off, on}) == on;
  };
  o.value = [=](const C& c) { return nlohmann::json(c.options.*field ? on : off); };
  return o;
}

// The ranks of a process group: "0-7,12" or [0, 1, ...].
std::vector<int> group_ranks(const nlohmann::json& ranks, const std::string& where) {
  if (ranks.is_string()) return parse_chip_list(ranks.get<std::string>(), 1 << 24, where);
  if (!ranks.is_array()) throw InputError(where + " must be a rank list (\"0-7\" or [0, 1, ...])");
  std::vector<int> list;
  for (const auto& r : ranks) list.push_back(static_cast<int>(option_integer(r, where, 0, (1 << 24) - 1)));
  return list;
}

// What runs where: the trace and topology (required), the engine, the algorithms, the groups.
void add_run_options(OptionTable<C>& t) {
  t.push_back(
      text_option<C>("trace", &C::trace, {}, "the prefix of PREFIX.<rank>.et (or .et.gz)", "required"));
  t.back().required = true;
  t.push_back(text_option<C>("topology", &C::topology, {}, "the topology its ranks run on", "required"));
  t.back().required = true;
  t.push_back(engine_option<C>(&C::engine, "contention-free where it proves exact, else flow, else SimGrid"));
  Option<C> every{"algorithm", "an algorithm name, or auto",
                  "the algorithm of every collective the trace has", "auto: the lowest model_s on the group"};
  every.set = [](C& c, const nlohmann::json& v, const std::string& where) {
    c.options.algorithms["*"] = option_text(v, where);
  };
  every.value = [](const C& c) {
    const auto it = c.options.algorithms.find("*");
    return it == c.options.algorithms.end() ? nlohmann::json() : nlohmann::json(it->second);
  };
  every.unset = "auto";
  t.push_back(every);
  Option<C> per{"algorithms", "an object {COLLECTIVE: ALGORITHM}", "the algorithm of each collective named",
                "auto"};
  per.set = [](C& c, const nlohmann::json& v, const std::string& where) {
    if (!v.is_object()) throw InputError(where + " must map collectives to algorithms");
    for (const auto& [collective, algorithm] : v.items()) {
      find_collective(collective);
      const std::string name = option_text(algorithm, where + ": " + collective);
      algorithm_candidates(collective, name);  // "did you mean" now
      c.options.algorithms[collective] = name;
    }
  };
  per.value = [](const C&) { return nlohmann::json(); };
  per.unset = "auto";
  t.push_back(per);
  Option<C> groups{"process_groups", "an object {NAME: \"0-7\" or [0, 1, ...]}",
                   "process groups the trace names, over its own metadata", "the trace's"};
  groups.set = [](C& c, const nlohmann::json& v, const std::string& where) {
    if (!v.is_object()) throw InputError(where + " must map group names to ranks");
    for (const auto& [name, ranks] : v.items())
      c.options.groups[name] = group_ranks(ranks, where + ": process group '" + name + "'");
  };
  groups.value = [](const C&) { return nlohmann::json(); };
  t.push_back(groups);
  t.push_back(text_option<C>("comm_group", &C::comm_group, {},
                             "FILE, ASTRA-sim's communicator groups as JSON, {\"1\": [0, 1, 2, 3]}", "none"));
}

// How a rank's nodes run: side by side or one at a time, how many communicate at once, how much
// communication slows compute, how a collective's size is read, which dependencies order nodes.
void add_stream_options(OptionTable<C>& t) {
  t.push_back(
      word_option("streams", &ChakraOptions::overlap, "overlap", "serial", true,
                  "overlap: a rank's ready nodes run side by side on their streams; serial: one node at "
                  "a time",
                  "ASTRA-sim's"));
  t.push_back(integer_field<C>(
      "comm_streams", [](auto& c) -> auto& { return c.options.comm_streams; }, 0, 1000000,
      "collectives, sends and memory nodes a rank runs at once (0: no limit)", "ASTRA-sim's: 1"));
  t.push_back(number_field<C>(
      "comm_slowdown", [](auto& c) -> auto& { return c.options.comm_slowdown; }, 0, 100,
      "F: compute started while its rank communicates takes (1 + F) x longer (a fraction: 0.2 is 20 %)",
      "assumption: none"));
  t.push_back(word_option("comm_size", &ChakraOptions::nccl_sizes, "nccl-tests", "astra-sim", false,
                          "how a collective's comm_size is read: astra-sim (an all-gather's is each rank's "
                          "input) or nccl-tests (its whole output)",
                          "ASTRA-sim's"));
  t.push_back(word_option("deps", &ChakraOptions::data_deps_only, "data", "all", false,
                          "all: data and control dependencies order nodes; data: control ones ignored "
                          "(Chakra's schema 1.0.1 converter points them at parent operators)",
                          "all"));
}

}  // namespace

const std::vector<std::string> kChakraFlagOptions{"streams",   "comm_streams", "comm_slowdown",
                                                  "comm_size", "deps",         "comm_group"};

const OptionTable<ChakraConfig>& chakra_options() {
  static const OptionTable<C> table = [] {
    OptionTable<C> t;
    add_run_options(t);
    add_stream_options(t);
    return t;
  }();
  return table;
}

}  // namespace ultrasim
