// sim/engines/simgrid/recorder.hpp: what the fabric keeps of a run.
#include <catch2/catch.hpp>

#include "sim/engines/simgrid/recorder.hpp"

using namespace ultrasim;

TEST_CASE("the recorder counts every message once, and keeps records only when recording") {
  for (bool record : {false, true}) {
    Recorder recorder(record);
    CHECK(recorder.recording() == record);
    recorder.count_message(100);
    recorder.count_message(0);  // an empty message still counts
    recorder.transfer(TransferRecord{0, 1, 60, 3, 0, 0.0, 2.0, 1.0});
    recorder.transfer(TransferRecord{0, 1, 40, 3, 1, 0.0, 2.5, 1.5});  // the other part of a striped one
    recorder.compute(ComputeRecord{2, "reduce", 1.0, 4.0});
    CHECK(recorder.transfer_count() == 2);
    CHECK(recorder.bytes_sent() == 100);
    if (!record) {
      CHECK(recorder.transfers().empty());
      CHECK(recorder.computes().empty());
      continue;
    }
    REQUIRE(recorder.transfers().size() == 2);  // in the order given
    CHECK(recorder.transfers()[0].path == 0);
    CHECK(recorder.transfers()[1].end == 2.5);
    REQUIRE(recorder.computes().size() == 1);
    CHECK(recorder.computes()[0].what == "reduce");
  }
}
