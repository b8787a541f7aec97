// Sweep files (`ultrasim sweep --file`, workloads/experiments/sweep.hpp read_sweep_file) and the sweep's own
// --sizes and --seeds values. The first byte picks which: a sweep file (then expanded into its grid,
// which checks every topology, collective, algorithm and --set name; a workload sweep's points are read
// by the MoE and training readers), a --sizes text or a --seeds text.
#include "fuzz_common.hpp"
#include "workloads/experiments/sweep.hpp"
#include "workloads/moe/moe.hpp"
#include "workloads/training/training.hpp"

namespace {

// Expanding builds every topology of the file: the same size guard as fuzz_topology_spec.
bool small_topologies(const ultrasim::SweepSpec& spec) {
  for (const auto& t : spec.topologies)
    if (t.rfind("file", 0) == 0 || !ultrasim::fuzz::small_numbers(t)) return false;
  return true;
}

// A workload sweep's points: the readers the registry's checks call for MoE and training (the collective
// reader is the program's, outside these libraries), on at most 1000 points.
void expand_workload_points(const ultrasim::SweepSpec& spec) {
  std::size_t points = spec.cases.empty() ? 1 : spec.cases.size();
  for (const auto& axis : spec.grid)
    if ((points *= axis.second.size()) > 1000) return;
  auto check = [](const nlohmann::json& w, const std::string& where) {
    if (w["workload"] == "moe") ultrasim::moe_config_from_json(w, where).validate();
    if (w["workload"] == "training") ultrasim::training_config_from_json(w, where);
  };
  for (const ultrasim::SweepPoint& point : ultrasim::expand_workloads(spec, check)) {
    point.run_args();
    point.inputs().dump();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ultrasim;
  if (size == 0) return 0;
  const std::string text = fuzz::text_of(data + 1, size - 1);
  fuzz::accepts_or_rejects([&] {
    switch (data[0] % 3) {
      case 0: {
        const SweepSpec spec = read_sweep_file(fuzz::write_input(text, ".sweep.json"));
        if (!spec.workload.empty()) return expand_workload_points(spec);
        if (!small_topologies(spec)) return;
        for (const SweepPoint& point : expand(spec)) {
          point.run_args();
          point.inputs().dump();
        }
        break;
      }
      case 1:
        parse_sizes(text);
        break;
      default:
        parse_seeds(text);
    }
  });
  return 0;
}
