// What each catalogue algorithm sends, step by step, as its textbook description says.
#include <catch2/catch.hpp>

#include "collectives/chain.hpp"
#include "collectives/cost.hpp"
#include "collectives/double_binary_tree.hpp"
#include "mutants.hpp"
#include "recording_transport.hpp"

using namespace ultrasim;
using ultrasim::test::run_on_fake;

namespace {

test::FakeRun run(const std::string& collective, const std::string& name, int p, std::uint64_t bytes) {
  return run_on_fake(*find_algorithm(collective, name).make_with_defaults(), find_collective(collective).kind,
                     p, bytes);
}

}  // namespace

TEST_CASE("recursive doubling swaps the whole buffer log2 p times on a power of two") {
  auto r = run("allreduce", "recursive-doubling", 8, 1000);
  CHECK(r.steps() == 3);
  for (int c = 0; c < 8; ++c) CHECK(r.bytes_sent_by(c) == 3 * 1000);
  for (const auto& s : r.sent) CHECK((s.src ^ s.dst) == (1 << (s.step - 1)));  // partner differs in bit k
}

TEST_CASE("recursive doubling folds the extra chips in and out when p is not a power of two") {
  auto r = run("allreduce", "recursive-doubling", 6, 1000);  // p' = 4, chips 0..3 fold in pairs
  CHECK(r.steps() == 4);                                     // fold, two swaps, unfold
  CHECK(r.bytes_sent_by(0) == 1000);                         // folds into chip 1, then only waits
  CHECK(r.bytes_sent_by(1) == 3 * 1000);                     // two swaps and the unfold
  CHECK(r.bytes_sent_by(4) == 2 * 1000);                     // two swaps
}

TEST_CASE("one-shot sends the whole buffer to every other chip in one step") {
  auto r = run("allreduce", "one-shot", 5, 1000);
  CHECK(r.steps() == 1);
  for (int c = 0; c < 5; ++c) CHECK(r.bytes_sent_by(c) == 4 * 1000);
}

TEST_CASE("two-shot and the direct phases send each part once per phase") {
  auto parts = even_chunks(1003, 5);
  auto two = run("allreduce", "two-shot", 5, 1003);
  auto rs = run("reducescatter", "direct", 5, 1003);
  auto ag = run("allgather", "direct", 5, 1003);
  CHECK(two.steps() == 2);
  for (int c = 0; c < 5; ++c) {
    CHECK(rs.bytes_sent_by(c) == 1003 - parts[c]);  // every part but its own, to its owner
    CHECK(ag.bytes_sent_by(c) == 4 * parts[c]);     // its own part to everyone
    CHECK(two.bytes_sent_by(c) == rs.bytes_sent_by(c) + ag.bytes_sent_by(c));
  }
}

TEST_CASE("pairwise all-to-all exchanges with chip r+k and r-k in round k") {
  auto r = run("alltoall", "pairwise", 6, 6000);
  CHECK(r.steps() == 5);
  for (const auto& s : r.sent) CHECK(s.dst == (s.src + s.step) % 6);
  for (int c = 0; c < 6; ++c) CHECK(r.bytes_sent_by(c) == 5000);
}

TEST_CASE("the bidirectional ring sends half the buffer each way in 2(p-1) steps") {
  auto r = run("allreduce", "bidir-ring", 4, 8000);
  CHECK(r.steps() == 6);
  for (int c = 0; c < 4; ++c) {
    CHECK(r.bytes_sent_by(c) == 2 * 3 * 1000 * 2);  // 2(p-1) steps x two 1000-byte chunks (n / 2p)
    int right = 0, left = 0;
    for (const auto& s : r.sent)
      if (s.src == c) (s.dst == (c + 1) % 4 ? right : left) += 1;
    CHECK(right == 6);
    CHECK(left == 6);
  }
}

TEST_CASE("a mutant of each family is caught by the verifier") {
  SECTION("recursive doubling that skips the unfold") {
    auto r = run_on_fake(test::SkipsUnfold(), CollectiveKind::kAllreduce, 6, 1000);
    CHECK(r.verdict.wrong == 2);  // chips 0 and 2 never get the result
  }
  SECTION("direct all-gather that drops one chunk") {
    auto r = run_on_fake(test::DropsOneChunk(), CollectiveKind::kAllgather, 5, 1000);
    CHECK(r.verdict.wrong == 5);
  }
  SECTION("pairwise all-to-all that delivers into the wrong slot") {
    auto r = run_on_fake(test::WrongSlot(), CollectiveKind::kAlltoall, 5, 1000);
    CHECK(r.verdict.wrong == 5 * 5);  // every part lands in the receiver's own slot: all five slots wrong
  }
}

TEST_CASE("binomial trees take ceil(log2 p) rounds and move the buffer once per edge") {
  auto b = run("broadcast", "binomial-tree", 6, 1000);
  CHECK(b.sent.size() == 5);              // one transfer into every chip but the root
  CHECK(b.bytes_sent_by(0) == 3 * 1000);  // the root feeds chips 4, 2, 1 in turn
  for (const auto& s : b.sent) CHECK(s.bytes == 1000);
  auto r = run("reduce", "binomial-tree", 6, 1000);
  CHECK(r.sent.size() == 5);  // one transfer out of every chip but the root
  for (int c = 1; c < 6; ++c) CHECK(r.bytes_sent_by(c) == 1000);
  CHECK(r.bytes_sent_by(0) == 0);
}

TEST_CASE("pipelined chains stream pipeline_chunks chunks down the line") {
  ParamSet params(pipeline_chunks_table().specs());
  params.apply({{"pipeline_chunks", "4"}});
  for (const char* collective : {"broadcast", "reduce"}) {
    INFO(collective);
    auto algorithm = find_algorithm(collective, "chain").make(params);
    auto r = run_on_fake(*algorithm, find_collective(collective).kind, 5, 4000);
    CHECK(r.verdict.wrong == 0);
    CHECK(r.sent.size() == 4 * 4);  // four chunks over each of the four hops
    CHECK(r.steps() == 4 + 5 - 2);  // C + p - 2 rounds
    int last = std::string(collective) == "broadcast" ? 4 : 0;
    CHECK(r.bytes_sent_by(last) == 0);  // the end of the line only receives
  }
}

TEST_CASE("a broadcast tree that forgets a child is caught by the verifier") {
  auto r = run_on_fake(test::ForgetsAChild(), CollectiveKind::kBroadcast, 8, 1000);
  CHECK(r.verdict.wrong == 1);  // chip 1 never receives the buffer
}

TEST_CASE("Bruck all-gather doubles the parts it forwards in ceil(log2 p) rounds, any p") {
  auto r = run("allgather", "bruck", 6, 1200);
  CHECK(r.steps() == 3);                                             // distances 1, 2, 4
  for (int c = 0; c < 6; ++c) CHECK(r.bytes_sent_by(c) == 5 * 200);  // 1 + 2 + 2 parts of 200 bytes
  for (const auto& s : r.sent) CHECK(s.dst == (s.src + 6 - (1 << s.step)) % 6);
}

TEST_CASE("Rabenseifner halves then doubles: 2 log2 p steps, 2(p-1)/p of the buffer per chip") {
  auto r = run("allreduce", "rabenseifner", 8, 8000);
  CHECK(r.steps() == 6);
  for (int c = 0; c < 8; ++c) CHECK(r.bytes_sent_by(c) == 2 * 7000);
  auto folded = run("allreduce", "rabenseifner", 6, 4000);  // p' = 4: fold and unfold whole buffers
  CHECK(folded.bytes_sent_by(0) == 4000);                   // folds into chip 1, then waits
  CHECK(folded.bytes_sent_by(1) == 2 * 3000 + 4000);        // four exchange steps and the unfold
}

TEST_CASE("recursive halving and doubling move (p-1)/p of the buffer per chip in log2 p steps") {
  for (const auto& [collective, name] : std::vector<std::pair<std::string, std::string>>{
           {"reducescatter", "recursive-halving"}, {"allgather", "recursive-doubling"}}) {
    INFO(name);
    auto r = run(collective, name, 8, 8000);
    CHECK(r.steps() == 3);
    for (int c = 0; c < 8; ++c) CHECK(r.bytes_sent_by(c) == 7000);
    for (const auto& s : r.sent) CHECK(__builtin_popcount(s.src ^ s.dst) == 1);  // partners differ in one bit
  }
}

TEST_CASE("scatter-allgather and reducescatter-gather move each part once through the tree plus a ring") {
  auto b = run("broadcast", "scatter-allgather", 8, 8000);
  CHECK(b.bytes_sent_by(0) == 7000 + 7000);  // scatters parts 1..7, then p-1 parts round the ring
  CHECK(b.steps() == 3 + 7);                 // log2 p scatter rounds and p-1 ring steps
  auto r = run("reduce", "reducescatter-gather", 8, 8000);
  CHECK(r.bytes_sent_by(0) == 7000);         // the root only takes part in the ring
  CHECK(r.bytes_sent_by(4) == 7000 + 4000);  // ring, then parts 4..7 to the root
  CHECK(r.steps() == 7 + 3);
}

TEST_CASE("Bruck all-to-all sends the indices with bit k set to chip r+2^k in ceil(log2 p) rounds") {
  auto r = run("alltoall", "bruck", 6, 6000);
  CHECK(r.verdict.wrong == 0);
  CHECK(r.steps() == 3);  // distances 1, 2, 4
  for (const auto& s : r.sent) CHECK(s.dst == (s.src + (1 << s.step)) % 6);
  // Indices {1,3,5}, {2,3}, {4,5} of 1000 bytes: each part crosses one link per set bit of its distance.
  for (int c = 0; c < 6; ++c) CHECK(r.bytes_sent_by(c) == (3 + 2 + 2) * 1000);
}

TEST_CASE("Bruck all-to-all parts keep their own size while parked at other chips") {
  // 1003 bytes over 5 chips: parts for chips 0..2 are 201 bytes, for chips 3 and 4 200 bytes.
  auto r = run("alltoall", "bruck", 5, 1003);
  CHECK(r.verdict.wrong == 0);
  auto sent = [&](int src, int step) {
    for (const auto& s : r.sent)
      if (s.src == src && s.step == step) return s.bytes;
    return std::uint64_t{0};
  };
  // Round 1 at chip 0 moves indices 2 and 3: its own part for chip 2 and the part chip 4 sent it in
  // round 0 for chip 2 (4 + 3), 201 bytes each, though chip 0's own index 3 was a 200-byte part.
  CHECK(sent(0, 1) == 2 * 201);
  CHECK(sent(0, 0) == 201 + 200);  // indices 1 and 3: parts for chips 1 and 3
  CHECK(sent(3, 2) == 201);        // index 4: chip 3's own part for chip 2
  std::uint64_t total = 0;
  for (const auto& s : r.sent) total += s.bytes;
  CHECK(total == 1003 * (0 + 1 + 1 + 2 + 1));  // every chip's parts cross popcount(i) links each
}

TEST_CASE("ring all-to-all relays p-s parts to the right neighbour in step s") {
  auto r = run("alltoall", "ring", 6, 6000);
  CHECK(r.verdict.wrong == 0);
  CHECK(r.steps() == 5);
  for (const auto& s : r.sent) {
    CHECK(s.dst == (s.src + 1) % 6);
    CHECK(s.bytes == std::uint64_t(6 - s.step) * 1000);
  }
  for (int c = 0; c < 6; ++c) CHECK(r.bytes_sent_by(c) == 6 * 5 / 2 * 1000);  // p(p-1)/2 parts
}

TEST_CASE("all-to-all mutants that misplace or miss parts are caught by the verifier") {
  SECTION("Bruck without the inverse rotation") {
    auto r = run_on_fake(test::SkipsInverseRotation(), CollectiveKind::kAlltoall, 5, 1000);
    CHECK(r.verdict.wrong == 5 * 4);  // for odd p only the index i with 2i = r (mod p) lands right
  }
  SECTION("ring relay one step short") {
    auto r = run_on_fake(test::RelaysOneStepShort(), CollectiveKind::kAlltoall, 5, 1000);
    CHECK(r.verdict.wrong == 5);  // every chip misses its right neighbour's part, p-1 hops away
  }
}

TEST_CASE("the double binary tree sends each half up both trees and passes it down to each child") {
  ParamSet params(find_algorithm("allreduce", "double-binary-tree").params);
  params.apply({{"pipeline_chunks", "4"}});
  auto algorithm = find_algorithm("allreduce", "double-binary-tree").make(params);
  for (int p : {8, 7}) {
    INFO("p=" << p);
    auto r = run_on_fake(*algorithm, CollectiveKind::kAllreduce, p, 8000);  // 8 chunks of 1000 bytes
    CHECK(r.verdict.wrong == 0);
    CHECK(r.sent.size() == std::size_t(4 * (p - 1) * 4));  // 2 trees x (p-1) edges x 4 chunks, up and down
    CHECK(r.steps() <= 2 * 2 * (ceil_log2(p) + 4));        // Sanders et al.: 2 ceil(log2 p) + 2C per phase
    for (int c = 0; c < p; ++c) {
      int non_root = 0, children = 0;
      for (int tree = 0; tree < 2; ++tree)
        for (int x = 0; x < p; ++x) {
          non_root += x == c && two_tree_parent(p, tree, x) >= 0;
          children += two_tree_parent(p, tree, x) == c;
        }
      CHECK(r.bytes_sent_by(c) == std::uint64_t(non_root + children) * 4000);  // half the buffer per edge
    }
  }
  auto r = run_on_fake(*algorithm, CollectiveKind::kAllreduce, 8, 8000);
  CHECK(r.bytes_sent_by(0) == 8000);      // roots tree 0 with one child, a leaf of tree 1
  CHECK(r.bytes_sent_by(7) == 8000);      // the mirror image
  CHECK(r.bytes_sent_by(3) == 2 * 8000);  // up both trees, down to its two children in tree 1
  for (const auto& s : r.sent) CHECK(s.bytes == 1000);
}

TEST_CASE("a double binary tree that sends before its second child's chunk arrived is caught") {
  // On 8 chips every tree has interior chips with two children below the root, so every chunk's sum
  // misses a subtree on every chip.
  auto r = run_on_fake(test::SendsBeforeSecondChild(), CollectiveKind::kAllreduce, 8, 8000);
  CHECK(r.verdict.wrong == 8 * 8);
}
