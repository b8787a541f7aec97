// Pairing sends with receives, shared by both engines: a send and a receive with the same (src, dst,
// step) pair up in posting order (the n-th send of a key with the n-th receive of it), whichever is
// posted first. The requests waiting for a partner are kept per destination chip and searched from the
// oldest: the partner is usually the oldest (a ring's chip receives its left neighbour's sends in order),
// so a match costs O(1) there and O(q) with q requests waiting from other chips (a direct all-to-all).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <tuple>
#include <vector>

namespace ultrasim {

template <class SendPtr, class RecvPtr>
class Matcher {
 public:
  explicit Matcher(int chips) : waiting_(chips) {}

  // A send was posted: returns the oldest waiting receive of its key (now taken), or null after
  // queueing the send.
  RecvPtr post_send(int src, int dst, int step, SendPtr send) {
    return post<RecvPtr>(waiting_[dst].recvs, waiting_[dst].sends, src, step, std::move(send));
  }
  // A receive was posted: returns the oldest unmatched send of its key (now taken), or null after
  // queueing the receive.
  SendPtr post_recv(int src, int dst, int step, RecvPtr recv) {
    return post<SendPtr>(waiting_[dst].sends, waiting_[dst].recvs, src, step, std::move(recv));
  }

  // The receives never matched, by (src, dst, step), for a deadlock report ("chip3 waits for chip2 step 5
  // (1 receive(s))").
  std::vector<std::string> unmatched_receives() const {
    std::vector<std::tuple<int, int, int>> keys;  // (src, dst, step), one per receive
    for (int dst = 0; dst < static_cast<int>(waiting_.size()); ++dst)
      for (const auto& r : waiting_[dst].recvs.items)
        if (r.src >= 0) keys.emplace_back(r.src, dst, r.step);
    std::sort(keys.begin(), keys.end());
    std::vector<std::string> out;
    for (std::size_t i = 0; i < keys.size();) {
      std::size_t j = i;
      while (j < keys.size() && keys[j] == keys[i]) ++j;
      auto [src, dst, step] = keys[i];
      out.push_back("chip" + std::to_string(dst) + " waits for chip" + std::to_string(src) + " step " +
                    std::to_string(step) + " (" + std::to_string(j - i) + " receive(s))");
      i = j;
    }
    return out;
  }

 private:
  template <class T>
  struct Waiting {
    int src = -1, step = 0;  // src -1: taken (a hole until the queue is compacted)
    T request;
  };
  // Oldest first from `head`. A match at the head (the usual case: a chip's sends to one receiver are
  // received in order) advances it; one further in leaves a hole, skipped and compacted away later.
  template <class T>
  struct Queue {
    std::vector<Waiting<T>> items;
    std::size_t head = 0;
  };
  struct PerChip {
    Queue<SendPtr> sends;
    Queue<RecvPtr> recvs;
  };

  template <class Taken, class Posted>
  static Taken post(Queue<Taken>& partners, Queue<Posted>& own, int src, int step, Posted posted) {
    auto& items = partners.items;
    auto found = std::find_if(items.begin() + static_cast<std::ptrdiff_t>(partners.head), items.end(),
                              [&](const auto& w) { return w.src == src && w.step == step; });
    if (found == items.end()) {
      own.items.push_back({src, step, std::move(posted)});
      return Taken{};
    }
    Taken taken = std::move(found->request);
    found->src = -1;
    while (partners.head < items.size() && items[partners.head].src < 0) ++partners.head;
    if (partners.head == items.size()) {
      items.clear(), partners.head = 0;
    } else if (partners.head > 32 && 2 * partners.head > items.size()) {
      items.erase(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(partners.head));
      partners.head = 0;
    }
    return taken;
  }

  std::vector<PerChip> waiting_;
};

}  // namespace ultrasim
