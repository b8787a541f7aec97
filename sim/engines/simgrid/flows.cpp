#include "sim/engines/simgrid/flows.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include <simgrid/Exception.hpp>

namespace sg = simgrid::s4u;

namespace ultrasim {

void wait_flow(const sg::CommPtr& flow) {
  try {
    flow->wait();
  } catch (const simgrid::CancelException&) {
    // Cancelled by a routing epoch, which started its replacement: the waiter looks again.
  } catch (const simgrid::NetworkFailureException&) {
    // The same: SimGrid 3.32 reports a cancelled flow's network action as failed.
  }
}

TransferRecord delivered_record(const Flow& flow, int src, int dst, int step, int sw) {
  return TransferRecord{src,
                        dst,
                        flow.bytes,
                        step,
                        flow.path,
                        flow.comm->get_start_time(),
                        flow.comm->get_finish_time() + flow.latency,
                        flow.comm->get_finish_time(),
                        flow.epoch,
                        false,
                        sw};
}

FlowStarter::FlowStarter(Platform& platform, int chips, double transfer_overhead)
    : platform_(platform), transfer_overhead_(transfer_overhead), chips_(chips) {
  for (int i = 0; i < chips; ++i) max_endpoints_ = std::max(max_endpoints_, platform.endpoint_count(i));
  flow_latency_.assign(static_cast<std::size_t>(chips) * chips * max_endpoints_,
                       std::numeric_limits<double>::quiet_NaN());
}

void FlowStarter::start_sinks() {
  for (int r = 0; r < chips_; ++r) {
    inbox_.emplace_back();
    for (int k = 0; k < platform_.endpoint_count(r); ++k) {
      sg::Host* host = platform_.endpoint_host(r, k);  // each its own (hashed routes: fault detours)
      sg::Mailbox* inbox = sg::Mailbox::by_name(host->get_name() + "_inbox");
      auto wake = sg::ConditionVariable::create();
      auto sink = sg::Actor::create(host->get_name() + "_sink", host, [inbox, wake] {
        sg::Actor::self()->daemonize();
        auto mutex = sg::Mutex::create();
        for (;;) {
          {
            std::unique_lock lock(*mutex);
            wake->wait(lock);
          }
          while (inbox->ready()) inbox->get<FlowStarter>();  // ended comms, oldest first; already timed
        }
      });
      inbox->set_receiver(sink);
      inbox_.back().push_back(Inbox{inbox, wake});
    }
  }
}

Flow FlowStarter::start(int src, int dst, std::uint64_t bytes, int endpoint, int path, int epoch) {
  sg::Host* from = platform_.chip(src);
  sg::Host* to = platform_.endpoint_host(dst, endpoint);
  double& latency = flow_latency_[(static_cast<std::size_t>(src) * chips_ + dst) * max_endpoints_ + endpoint];
  if (std::isnan(latency)) latency = platform_.route_latency(from, to, /*cache=*/false) + transfer_overhead_;
  if (!inbox_.empty() && sg::this_actor::get_host() == from) {
    Inbox& inbox = inbox_[dst][endpoint];
    if (++inbox.puts % kDrainEvery == 0) inbox.wake->notify_one();
    return Flow{inbox.mailbox->put_async(this, bytes), latency, path, bytes, epoch};
  }
  return Flow{sg::Comm::sendto_async(from, to, bytes), latency, path, bytes, epoch};
}

Flow FlowStarter::start_between(sg::Host* from, sg::Host* to, std::uint64_t bytes) {
  sg::CommPtr comm = sg::Comm::sendto_async(from, to, bytes);
  return Flow{comm, platform_.route_latency(from, to) + transfer_overhead_, 0, bytes};
}

}  // namespace ultrasim
