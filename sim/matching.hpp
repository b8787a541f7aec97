// Pairing sends with receives, shared by both engines: a send and a receive with the same (src, dst,
// step) pair up in posting order (the n-th send of a key with the n-th receive of it), whichever is
// posted first. Most keys hold one request at a time, so a key's queue is a small vector in a hash map.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <boost/container/small_vector.hpp>

namespace ultrasim {

struct MatchKey {
  int src = 0, dst = 0, step = 0;
  bool operator==(const MatchKey&) const = default;
  auto tie() const { return std::tie(src, dst, step); }
};

struct MatchKeyHash {
  std::size_t operator()(const MatchKey& k) const {
    std::uint64_t h = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.src)) << 32) ^
                      static_cast<std::uint32_t>(k.dst) ^ (static_cast<std::uint64_t>(k.step) << 17);
    h ^= h >> 33, h *= 0xff51afd7ed558ccdULL, h ^= h >> 33;
    return static_cast<std::size_t>(h);
  }
};

template <class SendPtr, class RecvPtr>
class Matcher {
 public:
  // A send was posted: returns the oldest waiting receive of its key (now taken), or null after
  // queueing the send.
  RecvPtr post_send(const MatchKey& key, SendPtr send) { return post(recvs_, sends_, key, std::move(send)); }
  // A receive was posted: returns the oldest unmatched send of its key (now taken), or null after
  // queueing the receive.
  SendPtr post_recv(const MatchKey& key, RecvPtr recv) { return post(sends_, recvs_, key, std::move(recv)); }

  // The receives never matched, in key order, for a deadlock report ("chip3 waits for chip2 step 5").
  std::vector<std::string> unmatched_receives() const {
    std::vector<std::pair<MatchKey, std::size_t>> waiting;
    for (const auto& [key, queue] : recvs_) waiting.emplace_back(key, queue.size());
    std::sort(waiting.begin(), waiting.end(),
              [](const auto& a, const auto& b) { return a.first.tie() < b.first.tie(); });
    std::vector<std::string> out;
    for (const auto& [key, count] : waiting)
      out.push_back("chip" + std::to_string(key.dst) + " waits for chip" + std::to_string(key.src) +
                    " step " + std::to_string(key.step) + " (" + std::to_string(count) + " receive(s))");
    return out;
  }

 private:
  template <class T>
  using Queues = std::unordered_map<MatchKey, boost::container::small_vector<T, 1>, MatchKeyHash>;

  template <class Taken, class Posted>
  static Taken post(Queues<Taken>& waiting, Queues<Posted>& pending, const MatchKey& key, Posted posted) {
    auto found = waiting.find(key);
    if (found == waiting.end()) {
      pending[key].push_back(std::move(posted));
      return Taken{};
    }
    Taken taken = std::move(found->second.front());
    found->second.erase(found->second.begin());
    if (found->second.empty()) waiting.erase(found);
    return taken;
  }

  Queues<SendPtr> sends_;
  Queues<RecvPtr> recvs_;
};

}  // namespace ultrasim
