#include "workloads/training/train_search.hpp"

#include <algorithm>
#include <sstream>

#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {
namespace {

std::vector<int> powers_of_two(int most) {
  std::vector<int> out;
  for (int x = 1; x <= most; x *= 2) out.push_back(x);
  return out;
}

// The layouts tried, in a fixed order (the ranking's ties keep it).
std::vector<TrainConfig> layout_candidates(const TrainConfig& base, int chips) {
  const ModelShape& m = base.model;
  const int most_tp = base.topology.find("trn") != std::string::npos ? 16 : 8;
  std::vector<TrainConfig> out;
  for (int tp : powers_of_two(std::min(most_tp, m.heads)))
    for (int pp = 1; pp <= std::min(chips, m.layers); ++pp) {
      if (chips % (tp * pp) != 0 || m.heads % tp != 0) continue;
      const int stage = chips / pp;  // tp x dp ranks of a stage
      for (int ep : m.moe() ? powers_of_two(std::min(m.experts, stage)) : std::vector<int>{1}) {
        if (stage % ep != 0 || m.experts % std::max(ep, 1) != 0) continue;
        for (const char* schedule : {"1f1b", "interleaved"}) {
          if (pp == 1 && std::string(schedule) == "interleaved") continue;
          TrainConfig c = base;
          c.tp = tp, c.pp = pp, c.cp = 1, c.ep = ep, c.etp = 1, c.zero = 1;
          c.schedule = pp == 1 ? "1f1b" : schedule;
          c.vp = std::string(schedule) == "interleaved" ? 2 : 1;
          out.push_back(c);
        }
      }
    }
  return out;
}

std::string layout_text(const TrainConfig& c) {
  std::string text = "tp " + std::to_string(c.tp) + " pp " + std::to_string(c.pp);
  if (c.ep > 1) text += " ep " + std::to_string(c.ep);
  text += " " + c.schedule + (c.vp > 1 ? " vp " + std::to_string(c.vp) : "");
  return text;
}

}  // namespace

nlohmann::ordered_json search_train_layouts(const TrainRequest& request) {
  TrainSession session(request.config);
  const int chips = session.chips();
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  nlohmann::ordered_json best;
  double best_rate = 0;
  for (TrainConfig c : layout_candidates(request.config, chips)) {
    nlohmann::ordered_json row{{"layout", layout_text(c)}};
    std::string refused;
    for (const char* recompute : {"none", "selective", "full"}) {
      TrainRequest one{c, request.command, ""};
      one.config.recompute = recompute;
      try {
        const nlohmann::ordered_json r = session.run(one);
        row["recompute"] = recompute;
        row["tokens_per_s_per_chip"] = r["tokens_per_s_per_chip"];
        row["mfu"] = r["mfu"];
        row["step_time_s"] = r["step_time_s"];
        if (r["tokens_per_s_per_chip"].get<double>() > best_rate)
          best_rate = r["tokens_per_s_per_chip"].get<double>(), best = r;
        refused.clear();
        break;
      } catch (const InputError& e) {
        refused = e.what();
        if (refused.find("does not fit") == std::string::npos) break;  // no recompute makes it run
      }
    }
    if (!refused.empty()) row["refused"] = refused;
    rows.push_back(row);
  }
  if (best.is_null())
    throw InputError("no layout of the " + std::to_string(rows.size()) + " tried runs " +
                     request.config.model.name + " on " + request.config.topology +
                     (rows.empty() ? std::string() : ": " + rows[0]["refused"].get<std::string>()));
  auto rate = [](const nlohmann::ordered_json& row) {
    return row.contains("tokens_per_s_per_chip") ? row["tokens_per_s_per_chip"].get<double>() : -1.0;
  };
  std::stable_sort(
      rows.begin(), rows.end(),
      [&](const nlohmann::ordered_json& a, const nlohmann::ordered_json& b) { return rate(a) > rate(b); });
  return {{"command", request.command}, {"best", best}, {"candidates", rows}, {"verified", true}};
}

std::string train_search_table(const nlohmann::ordered_json& r) {
  std::ostringstream out;
  out << "# best layout of " << r["candidates"].size() << " tried\n" << train_table(r["best"]);
  out << "# candidates: tokens/s per chip (MFU, recompute)\n";
  for (const auto& c : r["candidates"]) {
    out << "  " << c["layout"].get<std::string>() << ": ";
    if (c.contains("refused"))
      out << "refused: " << c["refused"].get<std::string>() << "\n";
    else
      out << fixed_text(c["tokens_per_s_per_chip"].get<double>(), 1) << " ("
          << fixed_text(100 * c["mfu"].get<double>(), 1) << " %, " << c["recompute"].get<std::string>()
          << ")\n";
  }
  return out.str();
}

}  // namespace ultrasim
