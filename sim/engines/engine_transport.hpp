// The Transport of one activity of a chip over an engine that performs every operation on behalf of any
// activity (the SimGrid Fabric, the contention-free engine, the flow engine): each call forwards with the
// activity's number, which is the chip's rank for the chip's own part (engines without spawn know no
// other). spawn and wait_any forward where the engine has them, else Transport's refusal.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "collectives/transport.hpp"

namespace ultrasim {

template <class Engine>
class EngineTransport : public Transport {
 public:
  EngineTransport(Engine& engine, int rank, int size, int actor = -1)
      : engine_(engine), rank_(rank), size_(size), self_(actor < 0 ? rank : actor) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  RequestPtr send(int dst, Message message, int step) override {
    return engine_.send(self_, dst, std::move(message), step);
  }
  RequestPtr recv(int src, int step) override { return engine_.recv(self_, src, step); }
  void wait_all(const std::vector<RequestPtr>& requests) override { engine_.wait_all(self_, requests); }
  void compute(double seconds, const std::string& what) override { engine_.compute(self_, seconds, what); }
  SwitchRequests switch_reduce(int sw, const std::vector<int>& members, Message message,
                               const std::vector<int>& wants, int step) override {
    return engine_.switch_reduce(self_, sw, members, std::move(message), wants, step);
  }
  double now() const override { return engine_.now(self_); }
  RequestPtr spawn(std::function<void(Transport&)> body) override {
    if constexpr (requires(Engine & e) { e.spawn(0, std::move(body)); })
      return engine_.spawn(self_, std::move(body));
    else
      return Transport::spawn(std::move(body));
  }
  std::size_t wait_any(const std::vector<RequestPtr>& activities) override {
    if constexpr (requires(Engine & e) { e.wait_any(0, activities); })
      return engine_.wait_any(self_, activities);
    else
      return Transport::wait_any(activities);
  }

 private:
  Engine& engine_;
  int rank_, size_, self_;
};

}  // namespace ultrasim
