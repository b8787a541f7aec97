#include "recording_transport.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>

namespace ultrasim::test {
namespace {

struct Shared {
  std::mutex mutex;
  std::condition_variable arrived;
  std::map<std::tuple<int, int, int>, std::deque<Message>> in_flight;
  std::vector<Sent> sent;
  struct Reduction {
    std::vector<Message> contributions;
    std::vector<std::vector<int>> wants;
    int count = 0;
  };
  std::map<std::pair<int, int>, Reduction> reductions;  // (switch, step)
};

struct FakeSwitchResult : Request {
  int sw = 0, step = 0, index = 0;
  std::vector<int> members;
  bool received = false;
};

struct FakeRecv : Request {
  int src = 0, step = 0;
  bool received = false;
};

class RecordingTransport : public Transport {
 public:
  RecordingTransport(Shared& shared, int rank, int size, double& compute)
      : shared_(shared), rank_(rank), size_(size), compute_(compute) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  RequestPtr send(int dst, Message message, int step) override {
    if (dst < 0 || dst >= size_ || dst == rank_) throw std::logic_error("send to an invalid chip");
    std::lock_guard lock(shared_.mutex);
    shared_.sent.push_back(Sent{rank_, dst, step, message.bytes()});
    shared_.in_flight[{rank_, dst, step}].push_back(std::move(message));
    shared_.arrived.notify_all();
    return std::make_shared<Request>();
  }
  RequestPtr recv(int src, int step) override {
    auto request = std::make_shared<FakeRecv>();
    request->src = src, request->step = step;
    return request;
  }
  void wait_all(const std::vector<RequestPtr>& requests) override {
    for (const auto& request : requests) {
      if (auto* result = dynamic_cast<FakeSwitchResult*>(request.get())) {
        if (result->received) continue;
        result->received = true;
        std::unique_lock lock(shared_.mutex);
        auto& reduction = shared_.reductions[{result->sw, result->step}];
        bool ok = shared_.arrived.wait_for(lock, std::chrono::seconds(5), [&] {
          return reduction.count == static_cast<int>(result->members.size());
        });
        if (!ok) throw std::runtime_error("fake transport: a switch reduction never completed (deadlock)");
        result->message =
            switch_result(result->members, reduction.contributions, rank_, reduction.wants[result->index]);
        shared_.sent.push_back(Sent{-1 - result->sw, rank_, result->step, result->message.bytes()});
        continue;
      }
      auto* receive = dynamic_cast<FakeRecv*>(request.get());
      if (!receive || receive->received) continue;  // waiting again keeps what arrived
      receive->received = true;
      std::unique_lock lock(shared_.mutex);
      auto key = std::make_tuple(receive->src, rank_, receive->step);
      bool ok = shared_.arrived.wait_for(lock, std::chrono::seconds(5),
                                         [&] { return !shared_.in_flight[key].empty(); });
      if (!ok) throw std::runtime_error("fake transport: receive never matched (deadlock)");
      receive->message = std::move(shared_.in_flight[key].front());
      shared_.in_flight[key].pop_front();
    }
  }
  SwitchRequests switch_reduce(int sw, const std::vector<int>& members, Message message,
                               const std::vector<int>& wants, int step) override {
    auto at = std::find(members.begin(), members.end(), rank_);
    if (at == members.end()) throw std::logic_error("switch_reduce from a chip that is not a member");
    auto result = std::make_shared<FakeSwitchResult>();
    result->sw = sw, result->step = step, result->index = static_cast<int>(at - members.begin());
    result->members = members;
    std::lock_guard lock(shared_.mutex);
    auto& reduction = shared_.reductions[{sw, step}];
    reduction.contributions.resize(members.size());
    reduction.wants.resize(members.size());
    shared_.sent.push_back(Sent{rank_, -1 - sw, step, message.bytes()});
    reduction.contributions[result->index] = std::move(message);
    reduction.wants[result->index] = wants;
    ++reduction.count;
    shared_.arrived.notify_all();
    return {std::make_shared<Request>(), result};
  }
  void compute(double seconds, const std::string&) override { compute_ += seconds; }
  double now() const override { return 0; }

 private:
  Shared& shared_;
  int rank_, size_;
  double& compute_;
};

}  // namespace

std::uint64_t FakeRun::bytes_sent_by(int chip) const {
  std::uint64_t total = 0;
  for (const auto& s : sent)
    if (s.src == chip) total += s.bytes;
  return total;
}

int FakeRun::steps() const {
  std::set<int> labels;
  for (const auto& s : sent) labels.insert(s.step);
  return static_cast<int>(labels.size());
}

namespace {

FakeRun run_threads(const Algorithm& algorithm, CollectiveKind kind, int p, std::uint64_t bytes,
                    std::optional<double> reduce_bandwidth, const TrafficMatrix* traffic) {
  Shared shared;
  FakeRun run;
  run.finals.resize(p);
  run.compute_seconds.assign(p, 0.0);
  std::vector<std::string> errors(p);
  const int chunks = algorithm.chunks(p);
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r) {
    threads.emplace_back([&, r] {
      try {
        RecordingTransport transport(shared, r, p, run.compute_seconds[r]);
        Layout layout = make_layout(kind, bytes, p, chunks, r, traffic);
        Chip chip(transport, layout.slot_bytes, layout.initial, reduce_bandwidth);
        algorithm.run(chip);
        run.finals[r] = chip.slots();
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (!e.empty()) throw std::runtime_error(e);
  run.sent = shared.sent;
  std::sort(run.sent.begin(), run.sent.end());
  run.verdict = verify(kind, p, chunks, run.finals, traffic);
  return run;
}

}  // namespace

FakeRun run_on_fake(const Algorithm& algorithm, CollectiveKind kind, int p, std::uint64_t bytes,
                    std::optional<double> reduce_bandwidth) {
  const TrafficMatrix uniform = TrafficMatrix::uniform(bytes, p);
  return run_threads(algorithm, kind, p, bytes, reduce_bandwidth, &uniform);
}

FakeRun run_on_fake(const Algorithm& algorithm, const TrafficMatrix& traffic) {
  return run_threads(algorithm, CollectiveKind::kAlltoallv, traffic.p(), traffic.busiest_load(), std::nullopt,
                     &traffic);
}

}  // namespace ultrasim::test
