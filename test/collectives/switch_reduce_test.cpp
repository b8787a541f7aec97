// In-switch all-reduce: each chip pushes the buffer once and gets the sum once; the switch does the adding.
#include <catch2/catch.hpp>

#include "mutants.hpp"
#include "recording_transport.hpp"

using namespace ultrasim;
using ultrasim::test::run_on_fake;

TEST_CASE(
    "switch-reduce and nvls send the buffer up once and receive the sum once, in pipeline_chunks slices") {
  for (const char* name : {"switch-reduce", "nvls"}) {  // on the fake, nvls has one plane: switch 0
    INFO(name);
    const AlgorithmEntry& entry = find_algorithm("allreduce", name);
    ParamSet params(entry.params);
    params.apply({{"pipeline_chunks", "4"}});
    auto algorithm = entry.make(params);
    auto r = run_on_fake(*algorithm, CollectiveKind::kAllreduce, 8, 8000);
    CHECK(r.verdict.wrong == 0);
    CHECK(r.steps() == 4);
    for (int c = 0; c < 8; ++c) {
      CHECK(r.bytes_sent_by(c) == 8000);
      std::uint64_t received = 0;
      for (const auto& s : r.sent)
        if (s.dst == c) {
          CHECK(s.src == -1);  // only the switch sends to chips
          received += s.bytes;
        }
      CHECK(received == 8000);
    }
  }
}

TEST_CASE("an in-switch all-reduce that does not ask for one slot back is caught by the verifier") {
  auto r = run_on_fake(test::ForgetsLastSlot(), CollectiveKind::kAllreduce, 6, 6000);
  CHECK(r.verdict.wrong == 6);  // the last chunk of every chip holds only its own contribution
}
