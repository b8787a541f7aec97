// A transport that never talks to a fabric: sends and receives return nothing, time stands still. For
// tests of what a chip does alone (its buffer, its view of a group's chips).
#pragma once

#include <string>
#include <vector>

#include "collectives/transport.hpp"

namespace ultrasim::test {

class IdleTransport : public Transport {
 public:
  explicit IdleTransport(int size = 1) : size_(size) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  RequestPtr send(int, Message, int) override { return nullptr; }
  RequestPtr recv(int, int) override { return nullptr; }
  void wait_all(const std::vector<RequestPtr>&) override {}
  SwitchRequests switch_reduce(int, const std::vector<int>&, Message, const std::vector<int>&, int) override {
    return {};
  }
  void compute(double, const std::string&) override {}
  double now() const override { return 0; }

 private:
  int size_;
};

}  // namespace ultrasim::test
