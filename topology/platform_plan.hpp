// What the SimGrid platform of a topology consists of, without SimGrid: hosts, links and explicit
// routes. sim/ builds the platform from it through S4U; export.cpp writes it as SimGrid XML. Both read
// this one plan, so the XML loads into the same platform (a test runs both and compares the times).
// The layout is fixed in sim/DESIGN.md.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "topology/routing.hpp"

namespace ultrasim {

// A split-duplex link. Its latency is the topology link's plus half the latency of each switch at its
// ends, so that a route between chips, which enters and leaves every switch it crosses through two
// links, sums to exactly link latencies + switch latencies. (Switch latency as a link of its own would
// couple every flow through that switch into one max-min constraint: 4.5x slower on trn3.)
struct PlanLink {
  std::string name;
  double bandwidth = 0;  // delivered, B/s, per direction
  double latency = 0;    // s (sim/ zeroes it on SimGrid's side and applies it per transfer)
};

struct PlanHop {
  int link = 0;    // index into PlatformPlan::links (same as Topology::links())
  bool up = true;  // direction on the split-duplex link
};

struct PlanRoute {
  int src = 0, dst = 0;  // indices into PlatformPlan::hosts
  std::vector<PlanHop> hops;
};

struct PlatformPlan {
  std::vector<std::string> hosts;  // chips first (host i = rank i), then switches, then path endpoints
  std::vector<PlanLink> links;     // one per topology link, same index as Topology::links()
  std::vector<PlanRoute> routes;
  std::vector<int> switch_host;                  // host index of each switch, in Topology::switches() order
  std::map<std::pair<int, int>, int> endpoints;  // (rank, k >= 1) -> host index of chip<rank>#k
  bool hashed_routes = false;  // PlanPaths::kTaken under hash: every path k of a pair is its route
};

std::vector<PlanHop> plan_hops(const Path& path);

// The plan with one host per chip and per switch, default routes between every ordered pair of chips
// and between every chip and every switch (a route ending at a switch's own host carries half of that
// switch's latency). Under a multi-path policy (Routes::policy() not single) it also holds every path
// set: with K the largest set, endpoint hosts chip<r>#k for k = 1..K-1 and every chip r (plane-major),
// and path k of each pair as the route chip<a> -> chip<b>#k. Throws SimulationError if a pair of chips
// is unreachable. With `paths` kTaken, what the simulator needs: the paths messages take
// (Routes::message_paths). Under `hash`, where a pair's messages all take one path, that path is then
// the pair's route and there are no endpoint hosts: SimGrid's Full zone keeps a table over every pair
// of hosts, and clos:24x24's 13,248 endpoints cost it 1.5 GB (the plan of every set, 7.7 M routes, 2 GB
// more). Under `stripe` every path is taken: the plan is kEvery's.
enum class PlanPaths { kEvery, kTaken };
PlatformPlan make_platform_plan(const Topology& topology, const Routes& routes,
                                PlanPaths paths = PlanPaths::kEvery);

// Path k >= 1 of the pair (a, b) (a further plane, rail or detour) is the route from a's own host to
// b's endpoint chip<b>#k: sources stay the chip hosts, so the chip's actor starts every flow (as a put,
// sim/DESIGN.md), and one endpoint per chip and plane serves every source. Adds that endpoint host if
// it is missing, and the route along `path`. Throws std::logic_error if the pair already has path k.
void add_path(PlatformPlan& plan, const Topology& topology, int a, int b, const Path& path, int k);
std::string endpoint_name(const Topology& topology, int rank, int path_index);

// The paths of a routing epoch (links failed, sim/machine/faults.hpp): for every ordered pair of chips
// that `routes` connects, path j of its message_paths as the route chip<a> -> chip<b>#(first + j), with
// endpoints chip<r>#k for every chip r and k in [first, first + width). Returns width, the largest
// path set. Pairs `routes` cannot connect get no route: the caller must not send between them.
int add_epoch_paths(PlatformPlan& plan, const Topology& topology, const Routes& routes, int first);

}  // namespace ultrasim
