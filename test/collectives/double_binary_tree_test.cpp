// The two trees of the double-binary-tree all-reduce and its round schedule, as Sanders, Speck & Träff
// (2009) and NCCL's trees describe them.
#include <catch2/catch.hpp>

#include <map>

#include "collectives/cost.hpp"
#include "collectives/double_binary_tree.hpp"

using namespace ultrasim;

TEST_CASE("two complementary trees of height ceil(log2 p): a chip has at most two children in all") {
  for (int p = 1; p <= 300; ++p) {
    INFO("p=" << p);
    std::vector<int> children(p, 0), interior_in(p, 0);
    int height = 0;
    for (int tree = 0; tree < 2; ++tree) {
      std::vector<int> in_this_tree(p, 0);
      int roots = 0;
      for (int x = 0; x < p; ++x) {
        int up = two_tree_parent(p, tree, x), depth = 0;
        if (up < 0)
          ++roots;
        else
          ++in_this_tree[up], ++children[up];
        for (int y = up; y >= 0 && depth <= p; y = two_tree_parent(p, tree, y)) ++depth;
        height = std::max(height, depth);
      }
      CHECK(roots == 1);
      for (int x = 0; x < p; ++x) interior_in[x] += in_this_tree[x] > 0;
    }
    CHECK(height == ceil_log2(p));  // also rules out cycles (depth would exceed p)
    for (int x = 0; x < p; ++x) {
      CHECK(children[x] <= 2);
      // Interior in one tree only; for odd p chip 0 roots tree 0 and has one child in each tree.
      if (!(p % 2 == 1 && x == 0)) CHECK(interior_in[x] <= 1);
    }
  }
  CHECK(two_tree_parent(8, 0, 4) == 0);  // tree 0 on 8 chips: 0 - 4 - {2, 6} - {1, 3, 5, 7}
  CHECK(two_tree_parent(8, 0, 3) == 2);
  CHECK(two_tree_parent(8, 1, 3) == 7);   // tree 1 mirrored: 7 - 3 - {5, 1} - {6, 4, 2, 0}
  CHECK(two_tree_parent(7, 1, 1) == -1);  // odd p: tree 1 is tree 0 shifted by one, rooted at chip 1
}

TEST_CASE("in every round a chip sends at most one chunk and receives at most one") {
  for (int p : {2, 3, 4, 5, 7, 8, 12, 17, 144})
    for (int chunks : {1, 4, 16}) {
      INFO("p=" << p << " chunks=" << chunks);
      auto schedule = two_tree_schedule(p, chunks);
      CHECK(schedule.size() == std::size_t(4 * (p - 1) * chunks));  // each edge, each chunk, up and down
      std::map<std::pair<int, int>, int> sends, receives;
      int up_rounds = 0, rounds = 0;
      for (std::size_t i = 0; i < schedule.size(); ++i) {
        const TreeTransfer& t = schedule[i];
        CHECK(++sends[{t.round, t.src}] == 1);
        CHECK(++receives[{t.round, t.dst}] == 1);
        for (int n : t.needs) {
          CHECK(schedule[n].dst == t.src);     // what the sender has received
          CHECK(schedule[n].round < t.round);  // in an earlier round
          CHECK(schedule[n].slot == t.slot);   // the same chunk
        }
        if (i > 0) CHECK(schedule[i - 1].round <= t.round);
        if (t.reduce) up_rounds = std::max(up_rounds, t.round + 1);
        rounds = std::max(rounds, t.round + 1);
      }
      // Sanders et al.: at most 2 ceil(log2 p) + 2C rounds per phase.
      CHECK(up_rounds <= 2 * (ceil_log2(p) + chunks));
      CHECK(rounds - up_rounds <= 2 * (ceil_log2(p) + chunks));
    }
}
