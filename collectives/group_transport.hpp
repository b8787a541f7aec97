// A chip seen through a group (communicator): local ranks 0..g-1 are the group's chips in order, and
// every step label is shifted by `step_offset`, so that several collectives in one run (a training
// step's stages) never match each other's messages. Free of SimGrid; the engines' transports sit below.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "collectives/transport.hpp"

namespace ultrasim {

// Which topology a group's ranks are chips of (what chip_of answers): the one below it, where member r
// is chip inner.chip_of(members[r]) (a communicator: its algorithm is placed on the whole topology), or
// one of the group's own, whose chip r is rank r (a job on `topology@chips`, placed on that part).
enum class GroupChips { kOfInner, kOwnTopology };

class GroupTransport : public Transport {
 public:
  // `members` must outlive this transport; `local` is this chip's index in it.
  GroupTransport(Transport& inner, const std::vector<int>& members, int local, int step_offset = 0,
                 GroupChips chips = GroupChips::kOfInner)
      : inner_(inner), members_(members), local_(local), offset_(step_offset), chips_(chips) {}
  int rank() const override { return local_; }
  int size() const override { return static_cast<int>(members_.size()); }
  int chip_of(int local) const override {
    return chips_ == GroupChips::kOwnTopology ? local : inner_.chip_of(members_.at(local));
  }
  RequestPtr send(int dst, Message message, int step) override {
    return inner_.send(members_.at(dst), std::move(message), step + offset_);
  }
  RequestPtr recv(int src, int step) override { return inner_.recv(members_.at(src), step + offset_); }
  void wait_all(const std::vector<RequestPtr>& requests) override { inner_.wait_all(requests); }
  SwitchRequests switch_reduce(int sw, const std::vector<int>& members, Message message,
                               const std::vector<int>& wants, int step) override {
    std::vector<int> chips;
    for (int m : members) chips.push_back(members_.at(m));
    return inner_.switch_reduce(sw, chips, std::move(message), wants, step + offset_);
  }
  void compute(double seconds, const std::string& what) override { inner_.compute(seconds, what); }
  double now() const override { return inner_.now(); }
  // The activity sees the same group, over its own inner transport.
  RequestPtr spawn(std::function<void(Transport&)> body) override {
    return inner_.spawn([this, body = std::move(body)](Transport& child) {
      GroupTransport group(child, members_, local_, offset_, chips_);
      body(group);
    });
  }
  std::size_t wait_any(const std::vector<RequestPtr>& activities) override {
    return inner_.wait_any(activities);
  }

 private:
  Transport& inner_;
  const std::vector<int>& members_;
  int local_, offset_;
  GroupChips chips_;
};

}  // namespace ultrasim
