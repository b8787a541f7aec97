// The Transport of one chip over an engine that performs every operation on behalf of any chip (the
// SimGrid Fabric, the contention-free engine): each call forwards with the chip's rank.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "collectives/transport.hpp"

namespace ultrasim {

template <class Engine>
class EngineTransport : public Transport {
 public:
  EngineTransport(Engine& engine, int rank, int size) : engine_(engine), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  RequestPtr send(int dst, Message message, int step) override {
    return engine_.send(rank_, dst, std::move(message), step);
  }
  RequestPtr recv(int src, int step) override { return engine_.recv(rank_, src, step); }
  void wait_all(const std::vector<RequestPtr>& requests) override { engine_.wait_all(rank_, requests); }
  void compute(double seconds, const std::string& what) override { engine_.compute(rank_, seconds, what); }
  SwitchRequests switch_reduce(int sw, const std::vector<int>& members, Message message,
                               const std::vector<int>& wants, int step) override {
    return engine_.switch_reduce(rank_, sw, members, std::move(message), wants, step);
  }
  double now() const override { return engine_.now(rank_); }

 private:
  Engine& engine_;
  int rank_, size_;
};

}  // namespace ultrasim
