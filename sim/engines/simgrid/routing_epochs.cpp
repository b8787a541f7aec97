#include "sim/engines/simgrid/routing_epochs.hpp"

#include <algorithm>
#include <cmath>

namespace sg = simgrid::s4u;

namespace ultrasim {

RoutingEpochs::RoutingEpochs(FlowStarter& flows, Recorder& recorder, const Routes* routes)
    : flows_(flows), recorder_(recorder), routes_(routes) {}

void RoutingEpochs::add(const Routes* routes, int first_endpoint) {
  if (epoch_routes_.empty()) epoch_routes_.push_back(routes_), epoch_first_endpoint_.push_back(0);
  epoch_routes_.push_back(routes);
  epoch_first_endpoint_.push_back(first_endpoint);
}

int RoutingEpochs::endpoint_of(int epoch, int path) const {
  return epoch == 0 ? flows_.platform().endpoint_index(path) : epoch_first_endpoint_[epoch] + path;
}

void RoutingEpochs::start_flows(MessageFlows& message, std::uint64_t bytes) {
  const int src = message.src, dst = message.dst;
  // A chip's message to itself never leaves it: no fault touches it (epoch 0's loopback route).
  const int epoch = src == dst ? 0 : epoch_;
  const Routes* routes = epoch == 0 ? routes_ : epoch_routes_[epoch];
  if (!routes || (epoch == 0 && routes->policy() == Multipath::kSingle)) {
    message.flows.push_back(flows_.start(src, dst, bytes, endpoint_of(0, 0), 0, 0));  // the route: no lookup
    return;
  }
  routes->for_each_flow(src, dst, bytes, [&](const PathShare& share, std::uint64_t part) {
    message.flows.push_back(
        flows_.start(src, dst, part, endpoint_of(epoch, share.index), share.index, epoch));
  });
}

void RoutingEpochs::keep(std::weak_ptr<MessageFlows> message) {
  // A weak pointer keeps its message's storage (one allocation with make_shared): drop the expired ones
  // whenever the list has doubled since the last time.
  if (live_.size() >= 2 * live_kept_)
    std::erase_if(live_, [](const auto& weak) { return weak.expired(); }), live_kept_ = live_.size() + 64;
  live_.push_back(std::move(message));
}

bool RoutingEpochs::crosses_down(const MessageFlows& message, const Flow& flow, const Routes& now) const {
  for (const PathShare& share : epoch_routes_[flow.epoch]->message_paths(message.src, message.dst))
    if (share.index == flow.path)
      return std::any_of(share.path.hops.begin(), share.path.hops.end(),
                         [&](const Hop& hop) { return now.link_down(hop.link); });
  return false;
}

std::vector<sg::CommPtr> RoutingEpochs::restart_crossing(MessageFlows& message, const Routes& now,
                                                         int epoch) {
  decltype(message.flows) flows;
  std::vector<sg::CommPtr> dropped;
  for (const Flow& flow : message.flows) {
    if (has_ended(*flow.comm) || !crosses_down(message, flow, now)) {
      flows.push_back(flow);
      continue;
    }
    dropped.push_back(flow.comm);
    if (recorder_
            .recording()) {  // what it carried until now crossed its links: kept, for the link statistics
      const double at = sg::Engine::get_clock();
      const auto left = static_cast<std::uint64_t>(std::llround(std::max(0.0, flow.comm->get_remaining())));
      recorder_.transfer(TransferRecord{message.src, message.dst, flow.bytes - std::min(left, flow.bytes),
                                        message.step, flow.path, flow.comm->get_start_time(), at, at,
                                        flow.epoch, true});
    }
    ++restarted_flows_;
    resent_bytes_ += flow.bytes;
    now.for_each_flow(message.src, message.dst, flow.bytes, [&](const PathShare& share, std::uint64_t part) {
      flows.push_back(
          flows_.start(message.src, message.dst, part, endpoint_of(epoch, share.index), share.index, epoch));
    });
  }
  message.flows = std::move(flows);
  return dropped;
}

void RoutingEpochs::begin(int epoch) {
  epoch_ = epoch;
  const Routes& now = *epoch_routes_.at(epoch);
  std::vector<std::weak_ptr<MessageFlows>> still;
  for (const auto& weak : live_) {
    auto message = weak.lock();
    if (!message) continue;
    // The replacements are in place and counted before the old flows are cancelled: a cancel wakes the
    // chips waiting for them, which must then find the new flows (starting a flow lets others run, but
    // wakes no waiter).
    for (const auto& comm : restart_crossing(*message, now, epoch)) comm->cancel();
    if (std::any_of(message->flows.begin(), message->flows.end(),
                    [](const Flow& f) { return !has_ended(*f.comm); }))
      still.push_back(message);
  }
  live_ = std::move(still);
}

}  // namespace ultrasim
