#include "sim/simgrid/platform.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "sim/engine/records.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/suggest.hpp"

namespace sg = simgrid::s4u;

namespace ultrasim {
namespace {
constexpr double kHostSpeed = 1e9;  // flop/s; compute is modelled as time, so the value is unused
}

void check_simgrid_setting(const std::string& setting) {
  const auto colon = setting.find(':');
  if (colon == std::string::npos || colon == 0)
    throw InputError("invalid --simgrid-cfg '" + setting +
                     "'; expected name:value, e.g. surf/precision:1e-9");
  const std::string name = setting.substr(0, colon), value = setting.substr(colon + 1);
  // SimGrid 3.32 calls xbt_die (abort) on an unknown model or optimisation name when the platform is built.
  static const std::vector<std::pair<std::string, std::vector<std::string>>> kChoices{
      {"network/model", {"CM02", "LV08", "SMPI", "IB"}},
      {"cpu/model", {"Cas01"}},
      {"host/model", {"default", "compound", "ptask_L07"}},
      {"network/optim", {"Full", "Lazy"}},
      {"cpu/optim", {"Full", "Lazy", "TI"}},
  };
  for (const auto& [key, known] : kChoices)
    if (name == key && std::find(known.begin(), known.end(), value) == known.end())
      throw InputError("--simgrid-cfg " + name + ": " + unknown_name_message("value", value, known));
  if (name == "disk/model")
    throw InputError("--simgrid-cfg disk/model: ultrasim's platforms have no disks; leave it unset");
  // A precision of 0 never converges (a hang), a stack of 0 or a negative guard crashes the actors.
  auto number = [&](double lowest, const std::string& expected) {
    char* end = nullptr;
    const double x = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !(x >= lowest) || !std::isfinite(x))
      throw InputError("invalid --simgrid-cfg '" + setting + "'; expected " + expected);
  };
  if (name.ends_with("precision")) number(1e-300, "a precision > 0, e.g. " + name + ":1e-9");
  if (name == "contexts/stack-size") number(16, "a stack size of at least 16 (KiB)");
  if (name == "contexts/guard-size") number(0, "a guard size >= 0 (pages)");
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
  check_input_file(xml_file, "platform '" + xml_file + "'", "a SimGrid XML file");
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
