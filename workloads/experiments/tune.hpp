// `ultrasim tune`: turns sweep rows (JSON Lines, /work/shared SWEEP_FORMAT: one object per point) into
// tuning tables, the per-size-range choice of algorithm a communication library would load.
//
// Rules (workloads/README.md, "ultrasim tune"):
// - A table per (topology, collective, machine sets): "sets" minus the algorithms' own parameters. A set
//   that changes the machine (link_bandwidth=...) keeps its rows apart; an algorithm parameter swept with
//   --set (pipeline_chunks=1,4,16) is a choice the library makes, so its values compete inside a table.
// - Candidates are rows with status "ok" and verified true. For each sampled size the best is the one with
//   the smallest time_s; ties go to the row read first (earlier --from file, then smaller "point", then
//   earlier line).
// - A choice is (algorithm, its own parameters): the values in the row's "parameters" of the names the
//   algorithm declares (AlgorithmEntry::params). Consecutive sampled sizes with the same choice merge into
//   one range.
// - Ranges tile the sampled span: a range starts at its first sampled size and ends one byte before the
//   next range starts (the last ends at the largest sampled size). A message of n bytes uses the range with
//   from_bytes <= n <= to_bytes, so between two sampled sizes the lower size's choice applies. Below the
//   first from_bytes or above the last to_bytes nothing was measured; a library clamps to the end range.
// - busbw_GBps, runner_up and margin are taken at the range's largest sampled size ("sampled_to_bytes").
//   The runner-up is the fastest candidate of another algorithm (name); margin = its time / the best time.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ultrasim {

// One usable-or-not sweep row, as read.
struct SweepRow {
  std::string topology, collective, algorithm;
  std::uint64_t bytes = 0;
  nlohmann::json sets = nlohmann::json::object();        // name -> value, as in the row
  nlohmann::json parameters = nlohmann::json::object();  // every parameter in effect (run's "parameters")
  double time_s = 0;
  nlohmann::json busbw_GBps;  // number or null
  bool ok = false;            // status "ok" and verified true
  long long point = 0;
  int file = 0, line = 0;  // where it was read (tie order)
};

// Reads JSON Lines (blank lines skipped). `source` names the input in errors, which are InputError
// "SOURCE:LINE: ..." for a line that is not a JSON object or lacks a field the contract requires.
std::vector<SweepRow> read_sweep_rows(std::istream& in, const std::string& source, int file_index = 0);
// One row already parsed (an object as `ultrasim sweep` writes it); the same InputError as above.
SweepRow sweep_row_from_json(const nlohmann::json& row, const std::string& source, int line,
                             int file_index = 0);
// Opens and reads a file; InputError when it cannot be opened.
std::vector<SweepRow> read_sweep_rows(const std::string& path, int file_index = 0);

struct TuneRange {
  std::uint64_t from_bytes = 0, to_bytes = 0, sampled_to_bytes = 0;
  std::string algorithm;
  nlohmann::json parameters = nlohmann::json::object();  // the algorithm's own, sorted by name
  nlohmann::json busbw_GBps;                             // at sampled_to_bytes; null for one chip
  std::optional<std::string> runner_up;
  std::optional<double> margin;  // runner-up time / best time at sampled_to_bytes
};

struct TuneTable {
  std::string topology, collective;
  nlohmann::json sets = nlohmann::json::object();  // the machine sets (algorithm parameters removed)
  std::vector<TuneRange> ranges;
};

// One sampled size of a group: its best candidate and the fastest candidate of another algorithm (null
// when there is none). Both point into the rows ranked.
struct SizeRanking {
  std::uint64_t bytes = 0;
  const SweepRow* best = nullptr;
  const SweepRow* runner_up = nullptr;
};
struct RankedGroup {
  std::string topology, collective;
  nlohmann::json sets = nlohmann::json::object();  // the machine sets
  std::vector<SizeRanking> sizes;                  // ascending
};
// The ranking of the rules above, shared by `tune` and the sweep summary: the usable rows' groups in the
// order their first row was read (empty when no row is usable).
std::vector<RankedGroup> rank_sweep_rows(const std::vector<SweepRow>& rows);

// The tables, in the order their first row was read. InputError "no usable rows ..." when no row is ok
// and verified.
std::vector<TuneTable> build_tuning_tables(const std::vector<SweepRow>& rows);

nlohmann::ordered_json tuning_json(const std::vector<TuneTable>& tables, const std::string& version,
                                   const std::string& command);
std::string tuning_text(const std::vector<TuneTable>& tables);

}  // namespace ultrasim
