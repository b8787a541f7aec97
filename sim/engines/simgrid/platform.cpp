#include "sim/engines/simgrid/platform.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "sim/engines/records.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"

namespace sg = simgrid::s4u;

namespace ultrasim {
namespace {
constexpr double kHostSpeed = 1e9;  // flop/s; compute is modelled as time, so the value is unused
}

namespace {

// The settings --simgrid-cfg accepts: each changes how SimGrid computes, not what (the times stay those
// of the model, within its precision), and none can abort, crash or hang it in the values given. A model
// (network/model, bandwidth or latency factors, TCP-gamma, crosstraffic) would change the times ultrasim
// checks against theory; contexts/factory:thread deadlocks SimGrid 3.32 at the end of a run.
struct SimGridSetting {
  std::string name;
  std::vector<std::string> words;  // the values accepted, or empty for a number
  double min = 0, max = 0;         // a number: [min, max]
  std::string meaning;
};

const std::vector<SimGridSetting>& simgrid_settings() {
  static const std::vector<SimGridSetting> settings{
      {"surf/precision", {}, 1e-15, 1e-5, "the solver's precision (ultrasim sets 1e-9)"},
      {"maxmin/precision", {}, 1e-15, 1e-5, "the max-min solver's precision"},
      {"network/maxmin-selective-update", {"yes", "no"}, 0, 0, "re-solve only what changed"},
      {"network/optim", {"Full", "Lazy"}, 0, 0, "how the network model updates its actions"},
      {"cpu/optim", {"Full", "Lazy", "TI"}, 0, 0, "how the CPU model updates its actions"},
      {"contexts/factory", {"ucontext", "boost", "raw"}, 0, 0, "how actors switch stacks"},
      {"contexts/stack-size", {}, 16, 1 << 20, "an actor's stack, KiB"},
      {"contexts/guard-size", {}, 0, 64, "guard pages under an actor's stack"},
  };
  return settings;
}

std::string accepted_settings() {
  std::string out;
  for (const auto& s : simgrid_settings()) out += (out.empty() ? "" : ", ") + s.name;
  return out;
}

}  // namespace

void check_simgrid_setting(const std::string& setting) {
  const auto colon = setting.find(':');
  if (colon == std::string::npos || colon == 0)
    throw InputError("invalid --simgrid-cfg '" + setting +
                     "'; expected name:value, e.g. surf/precision:1e-9");
  const std::string name = setting.substr(0, colon), value = setting.substr(colon + 1);
  const auto& settings = simgrid_settings();
  const auto it =
      std::find_if(settings.begin(), settings.end(), [&](const auto& s) { return s.name == name; });
  if (it == settings.end())
    throw InputError("--simgrid-cfg " + name +
                     ": not a setting ultrasim passes to SimGrid (it could change "
                     "the model's times or stop the run); accepted: " +
                     accepted_settings());
  if (!it->words.empty()) {
    if (std::find(it->words.begin(), it->words.end(), value) == it->words.end())
      throw InputError("--simgrid-cfg " + name + ": " + unknown_name_message("value", value, it->words));
    return;
  }
  char* end = nullptr;
  const double x = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !(x >= it->min && x <= it->max))
    throw InputError("invalid --simgrid-cfg '" + setting + "'; expected a number in [" +
                     shortest_number(it->min) + ", " + shortest_number(it->max) + "] (" + it->meaning + ")");
}

void configure_engine() {
  sg::Engine::set_config("network/model:CM02");
  sg::Engine::set_config("network/crosstraffic:0");
  sg::Engine::set_config("network/TCP-gamma:0");
  sg::Engine::set_config("network/optim:Full");
  // Re-solve only the constraints an event touched, not every flow in the system: same shares (the 58
  // catalogue runs on trn3 are bit-identical), 1.1-1.8x faster where many flows are in flight.
  sg::Engine::set_config("network/maxmin-selective-update:yes");
  sg::Engine::set_config("surf/precision", kSimGridPrecision);
}

Platform Platform::build(const PlatformPlan& plan, const Topology& topology) {
  auto* zone = sg::create_full_zone("ultrasim");
  std::vector<simgrid::kernel::routing::NetPoint*> hosts;
  for (const auto& name : plan.hosts) hosts.push_back(zone->create_host(name, kHostSpeed)->get_netpoint());
  std::vector<sg::SplitDuplexLink*> links;
  for (const auto& l : plan.links) {
    sg::SplitDuplexLink* link = zone->create_split_duplex_link(l.name, l.bandwidth);
    link->set_latency(l.latency)->seal();
    links.push_back(link);
  }
  for (const auto& route : plan.routes) {
    std::vector<sg::LinkInRoute> hops;
    for (const auto& hop : route.hops)
      hops.emplace_back(links[hop.link],
                        hop.up ? sg::LinkInRoute::Direction::UP : sg::LinkInRoute::Direction::DOWN);
    zone->add_route(hosts[route.src], hosts[route.dst], nullptr, nullptr, hops, false);
  }
  zone->seal();
  Platform platform(topology);
  platform.hashed_routes_ = plan.hashed_routes;
  platform.find_hosts();
  platform.zero_latencies();
  return platform;
}

Platform Platform::load(const std::string& xml_file, const Topology& topology) {
  // SimGrid's parser exits with a bare "input in flex scanner failed" on a directory.
  const std::string name = "platform '" + xml_file + "'";
  check_xml_depth(read_input_file(xml_file, name, "a SimGrid XML file"), name);
  try {
    sg::Engine::get_instance()->load_platform(xml_file);
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw InputError("cannot load platform '" + xml_file + "': " + what.substr(0, what.find('\n')));
  }
  Platform platform(topology);
  platform.find_hosts();
  platform.zero_latencies();
  return platform;
}

void Platform::find_hosts() {
  auto* engine = sg::Engine::get_instance();
  auto find = [&](const std::string& name) {
    sg::Host* host = engine->host_by_name_or_null(name);
    if (!host) throw InputError("platform has no host '" + name + "' for topology " + topology_->spec());
    return host;
  };
  for (int r = 0; r < topology_->chip_count(); ++r)
    chips_.push_back(find(topology_->node(topology_->chip(r)).name));
  for (Vertex s : topology_->switches()) switches_.push_back(find(topology_->node(s).name));
  for (int r = 0; r < topology_->chip_count(); ++r) {
    endpoints_.push_back({chips_[r]});
    while (sg::Host* host = engine->host_by_name_or_null(
               endpoint_name(*topology_, r, static_cast<int>(endpoints_.back().size()))))
      endpoints_.back().push_back(host);
  }
}

void Platform::zero_latencies() {
  for (sg::Link* link : sg::Engine::get_instance()->get_all_links()) {
    link_latency_[link] = link->get_latency();
    link->set_latency(0);
  }
}

sg::Host* Platform::endpoint_host(int rank, int index) const {
  const auto& hosts = endpoints_.at(rank);
  if (index < 0 || index >= static_cast<int>(hosts.size()))
    throw std::logic_error("no endpoint " + endpoint_name(*topology_, rank, index));
  return hosts[index];
}

double Platform::route_latency(sg::Host* src, sg::Host* dst, bool cache) {
  if (cache)
    if (auto row = route_latency_.find(src); row != route_latency_.end())
      if (auto it = row->second.find(dst); it != row->second.end()) return it->second;
  std::vector<sg::Link*> links;
  src->route_to(dst, links, nullptr);
  double latency = 0;
  for (const sg::Link* link : links) latency += link_latency_.at(link);
  if (cache) route_latency_[src].emplace(dst, latency);
  return latency;
}

}  // namespace ultrasim
