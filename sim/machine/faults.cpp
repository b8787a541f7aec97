#include "sim/machine/faults.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <set>

#include "topology/base/errors.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {
namespace {

// clang-format off
struct FaultKind {
  std::string name;
  Fault::Kind kind;
  const char* form;
};
const std::vector<FaultKind> kFaultKinds = {
    {"link-down",   Fault::Kind::kLinkDown,   "link-down:NAME@TIME[-TIME]"},
    {"switch-down", Fault::Kind::kSwitchDown, "switch-down:NAME@TIME[-TIME]"},
    {"degrade",     Fault::Kind::kDegrade,    "degrade:NAME=FRACTION[@TIME[-TIME]]"},
    {"slow-chip",   Fault::Kind::kSlowChip,   "slow-chip:RANK=FACTOR"},
    {"late-chip",   Fault::Kind::kLateChip,   "late-chip:RANK@TIME"},
};
// clang-format on

[[noreturn]] void bad(const std::string& text, const std::string& why, const char* form) {
  throw InputError("invalid --fault '" + text + "': " + why + "; expected " + form);
}

// "2us" or "2us-5us" (a '-' right after an exponent's 'e' belongs to the number).
void parse_interval(const std::string& text, const std::string& span, const char* form, Fault& fault) {
  std::size_t dash = std::string::npos;
  for (std::size_t i = 1; i < span.size(); ++i)
    if (span[i] == '-' && span[i - 1] != 'e' && span[i - 1] != 'E') {
      dash = i;
      break;
    }
  auto time = [&](const std::string& t) {
    try {
      return parse_time(t);
    } catch (const InputError& e) {
      bad(text, e.what(), form);
    }
  };
  fault.at = time(span.substr(0, dash));
  if (dash != std::string::npos) {
    fault.until = time(span.substr(dash + 1));
    if (!(*fault.until > fault.at))
      bad(text, "the end time " + span.substr(dash + 1) + " is not after the start " + span.substr(0, dash),
          form);
  }
}

int parse_rank(const std::string& text, const std::string& word, const Topology& topology, const char* form) {
  int rank = -1;
  auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), rank);
  if (word.empty() || error != std::errc() || end != word.data() + word.size() || rank < 0)
    bad(text, "'" + word + "' is not a chip rank", form);
  if (rank >= topology.chip_count())
    bad(text,
        "rank " + word + " is out of range (" + topology.spec() + " has chips 0.." +
            std::to_string(topology.chip_count() - 1) + ")",
        form);
  return rank;
}

double parse_number(const std::string& text, const std::string& word, const char* what, const char* form) {
  try {
    return parse_ratio(word);
  } catch (const InputError&) {
    bad(text, "'" + word + "' is not a " + std::string(what), form);
  }
}

bool matches(const std::string& pattern, const std::string& name) {
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

// The links (or, for switch-down, the switches' links) NAME names, exactly or as a glob.
void resolve(const std::string& text, const std::string& pattern, const char* form, Fault& fault,
             const Topology& topology) {
  if (pattern.empty()) bad(text, "no name", form);
  std::vector<std::string> known;
  if (fault.kind == Fault::Kind::kSwitchDown) {
    std::set<int> links;
    for (Vertex s : topology.switches()) {
      const std::string& name = topology.node(s).name;
      known.push_back(name);
      if (!matches(pattern, name)) continue;
      fault.names.push_back(name);
      for (auto [e, end] = boost::out_edges(s, topology.graph()); e != end; ++e)
        links.insert(topology.link(*e).index);
    }
    fault.links.assign(links.begin(), links.end());
  } else {
    for (const Link& link : topology.links()) {
      known.push_back(link.name);
      if (matches(pattern, link.name)) fault.names.push_back(link.name), fault.links.push_back(link.index);
    }
  }
  if (fault.names.empty()) {
    const char* kind = fault.kind == Fault::Kind::kSwitchDown ? "switch" : "link";
    std::string guess = closest_name(pattern, known);
    bad(text,
        "no " + std::string(kind) + " of " + topology.spec() + " is named '" + pattern + "'" +
            (guess.empty() ? "" : " (did you mean '" + guess + "'?)") + "; `ultrasim topology " +
            topology.spec() + " --format json` lists them",
        form);
  }
}

}  // namespace

Fault parse_fault(const std::string& text, const Topology& topology) {
  const std::size_t colon = text.find(':');
  const std::string word = text.substr(0, colon);
  const std::string body = colon == std::string::npos ? "" : text.substr(colon + 1);
  auto kind =
      std::find_if(kFaultKinds.begin(), kFaultKinds.end(), [&](const auto& k) { return k.name == word; });
  if (kind == kFaultKinds.end()) {
    std::vector<std::string> known;
    for (const auto& k : kFaultKinds) known.push_back(k.name);
    throw InputError("invalid --fault '" + text + "': " + unknown_name_message("fault kind", word, known));
  }
  if (colon == std::string::npos || body.empty()) bad(text, "nothing after '" + word + "'", kind->form);
  Fault fault;
  fault.kind = kind->kind;
  fault.text = text;
  const char* form = kind->form;
  switch (fault.kind) {
    case Fault::Kind::kLinkDown:
    case Fault::Kind::kSwitchDown: {
      const std::size_t at = body.rfind('@');
      if (at == std::string::npos) bad(text, "no '@TIME'", form);
      resolve(text, body.substr(0, at), form, fault, topology);
      parse_interval(text, body.substr(at + 1), form, fault);
      break;
    }
    case Fault::Kind::kDegrade: {
      const std::size_t eq = body.find('=');
      if (eq == std::string::npos) bad(text, "no '=FRACTION'", form);
      resolve(text, body.substr(0, eq), form, fault, topology);
      const std::string rest = body.substr(eq + 1);
      const std::size_t at = rest.find('@');
      fault.value = parse_number(text, rest.substr(0, at), "fraction", form);
      if (!(fault.value > 0 && fault.value <= 1))
        bad(text, "the fraction " + rest.substr(0, at) + " is not in (0, 1] (a failed link is link-down)",
            form);
      if (at != std::string::npos) parse_interval(text, rest.substr(at + 1), form, fault);
      break;
    }
    case Fault::Kind::kSlowChip: {
      const std::size_t eq = body.find('=');
      if (eq == std::string::npos) bad(text, "no '=FACTOR'", form);
      fault.rank = parse_rank(text, body.substr(0, eq), topology, form);
      fault.value = parse_number(text, body.substr(eq + 1), "factor", form);
      if (!(fault.value >= 1)) bad(text, "the factor " + body.substr(eq + 1) + " is below 1", form);
      break;
    }
    case Fault::Kind::kLateChip: {
      const std::size_t at = body.find('@');
      if (at == std::string::npos) bad(text, "no '@TIME'", form);
      fault.rank = parse_rank(text, body.substr(0, at), topology, form);
      parse_interval(text, body.substr(at + 1), form, fault);
      if (fault.until) bad(text, "a chip starts late once: give one time", form);
      break;
    }
  }
  return fault;
}

FaultPlan plan_faults(const std::vector<std::string>& specs, const Topology& topology) {
  FaultPlan plan;
  const int p = topology.chip_count();
  plan.compute_scale.assign(p, 1.0);
  plan.start.assign(p, 0.0);
  plan.epochs.push_back(FaultPlan::Epoch{0, std::vector<char>(topology.links().size(), 0), {}});
  constexpr double kNever = std::numeric_limits<double>::infinity();
  std::set<double> failure_times;
  std::map<int, std::set<double>> degrade_times;  // per link
  for (const std::string& spec : specs) {
    Fault fault = parse_fault(spec, topology);
    switch (fault.kind) {
      case Fault::Kind::kSlowChip:
        plan.compute_scale[fault.rank] *= fault.value;
        break;
      case Fault::Kind::kLateChip:
        plan.start[fault.rank] = std::max(plan.start[fault.rank], fault.at);
        break;
      case Fault::Kind::kDegrade:
        for (int link : fault.links) {
          degrade_times[link].insert(fault.at);
          if (fault.until) degrade_times[link].insert(*fault.until);
        }
        break;
      default:
        failure_times.insert(fault.at);
        if (fault.until) failure_times.insert(*fault.until);
    }
    plan.faults.push_back(std::move(fault));
  }
  auto active = [kNever](const Fault& f, double t) { return f.at <= t && t < f.until.value_or(kNever); };
  for (double t : failure_times) {
    FaultPlan::Epoch epoch{t, std::vector<char>(topology.links().size(), 0), {}};
    for (const Fault& f : plan.faults)
      if ((f.kind == Fault::Kind::kLinkDown || f.kind == Fault::Kind::kSwitchDown) && active(f, t)) {
        for (int link : f.links) epoch.down[link] = 1;
        epoch.cause.push_back(f.text);
      }
    if (epoch.down != plan.epochs.back().down) plan.epochs.push_back(std::move(epoch));
  }
  for (const auto& [link, times] : degrade_times) {
    double previous = 1;
    for (double t : times) {
      double fraction = 1;
      for (const Fault& f : plan.faults)
        if (f.kind == Fault::Kind::kDegrade && active(f, t) &&
            std::find(f.links.begin(), f.links.end(), link) != f.links.end())
          fraction *= f.value;
      if (fraction != previous)
        plan.bandwidth_changes.push_back(FaultPlan::BandwidthChange{t, link, fraction});
      previous = fraction;
    }
  }
  std::stable_sort(plan.bandwidth_changes.begin(), plan.bandwidth_changes.end(),
                   [](const auto& x, const auto& y) { return x.at < y.at; });
  return plan;
}

}  // namespace ultrasim
