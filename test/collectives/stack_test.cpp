#include <catch2/catch.hpp>

#include "collectives/stack.hpp"
#include "topology/base/errors.hpp"

using namespace ultrasim;

TEST_CASE("the built-in stacks: ideal first, each protocol with its terms and a source") {
  const std::vector<Stack>& stacks = builtin_stacks();
  REQUIRE(stacks.size() == 3);
  CHECK(stacks[0].name == "ideal");
  CHECK(stacks[1].name == "nccl");
  CHECK(stacks[2].name == "neuron");
  for (const Stack& s : stacks) {
    CHECK(s.origin == "built-in");
    for (const Protocol& p : s.protocols) CHECK(p.source.size() > 40);
  }
  const Protocol& ideal = stacks[0].protocols.at(0);
  CHECK(ideal.launch_latency == 0.0);
  CHECK(ideal.step_latency == 0.0);
  CHECK(ideal.efficiency == 1.0);
  // NCCL's tuning model (src/graph/tuning.cc): ring base latency and NVLink per-step latency per protocol.
  const Stack& nccl = find_stack("nccl");
  CHECK(nccl.protocol("LL").launch_latency == Approx(6.6e-6).epsilon(1e-12));
  CHECK(nccl.protocol("LL").step_latency == Approx(0.6e-6).epsilon(1e-12));
  CHECK(nccl.protocol("LL").efficiency == 0.5);
  CHECK(nccl.protocol("LL128").launch_latency == Approx(14e-6).epsilon(1e-12));
  CHECK(nccl.protocol("LL128").efficiency == 0.92);
  CHECK(nccl.protocol("Simple").step_latency == Approx(3.4e-6).epsilon(1e-12));
  CHECK(nccl.protocol("Simple").network_step_latency == Approx(14e-6).epsilon(1e-12));
  CHECK(nccl.offers("allreduce", "ring"));
  CHECK_FALSE(nccl.offers("allreduce", "one-shot"));
  CHECK(nccl.offers("gather-like-anything", "whatever"));  // a collective it does not list: all
  CHECK(find_stack("neuron").protocol("neuron").network_step_latency == Approx(15e-6).epsilon(1e-12));
}

TEST_CASE("stack names and files are checked, with the field at fault named") {
  CHECK_THROWS_WITH(find_stack("ncl"), Catch::Contains("unknown stack 'ncl'") && Catch::Contains("'nccl'"));
  CHECK_THROWS_WITH(find_stack("/nonexistent/s.json"),
                    Catch::Contains("cannot read stack file '/nonexistent/s.json'"));
  CHECK_THROWS_WITH(find_stack("nccl").protocol("LL64"), Catch::Contains("did you mean 'LL'"));
  auto error_of = [](const std::string& text) {
    try {
      parse_stack(text, "s.json", "s.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string protocol =
      R"({"name": "p", "launch_latency": "1us", "step_latency": "1us", "network_step_latency": "0us", )"
      R"("efficiency": EFF, "source": "src"})";
  auto stack = [&](const std::string& eff, const std::string& extra = "") {
    std::string p = protocol;
    p.replace(p.find("EFF"), 3, eff);
    return R"({"name": "x", "description": "d", "protocols": [)" + p + "]" + extra + "}";
  };
  CHECK(error_of(stack("1")) == "accepted");
  CHECK(error_of(stack("2")) == "s.json: protocols[0]: field 'efficiency' is 2; it must be in (0, 1]");
  CHECK(error_of(stack("0")) == "s.json: protocols[0]: field 'efficiency' is 0; it must be in (0, 1]");
  CHECK(error_of(stack("1", R"(, "algorithms": {"allreduce": ["rign"]}, "algorithms_source": "s")")) ==
        "s.json: algorithms.allreduce: unknown algorithm 'rign'; did you mean 'ring'? known: ring, "
        "bidir-ring, recursive-doubling, rabenseifner, double-binary-tree, one-shot, two-shot, hierarchical, "
        "switch-reduce, nvls, ring-2d (for allreduce)");
  CHECK(error_of(stack("1", R"(, "algorithms": {"allreduce": ["ring"]})")) ==
        "s.json: field 'algorithms' needs 'algorithms_source'");
  CHECK(error_of(stack("1", R"(, "channels": 4)")) == "s.json: unknown field 'channels'");
  auto channels = [&](const std::string& c) {
    std::string p = stack("1");
    p.replace(p.find(R"("source")"), 8, R"("channels": )" + c + R"(, "source")");
    return error_of(p);
  };
  CHECK(channels(R"({"count": 24, "bytes_per_rank": "4KiB"})") == "accepted");
  CHECK(channels(R"({"count": 0})") ==
        "s.json: protocols[0]: channels: field 'count' must be an integer from 1 to 1024");
  CHECK(channels(R"({"count": 4, "bytez": "1KiB"})") ==
        "s.json: protocols[0]: channels: unknown field 'bytez'");
  CHECK(channels("4") == "s.json: protocols[0]: channels: must be an object {count, bytes, bytes_per_rank}");
  CHECK_THAT(channels(R"({"count": 4, "bytes": "lots"})"),
             Catch::StartsWith("s.json: protocols[0]: channels: field 'bytes': "));
  CHECK(error_of(R"({"name": "x", "description": "d", "protocols": []})") ==
        "s.json: field 'protocols' must be a non-empty list");
  std::string slow = stack("1");
  const std::string fast = R"("launch_latency": "1us")";
  slow.replace(slow.find(fast), fast.size(), R"("launch_latency": "2s")");
  CHECK(error_of(slow) ==
        "s.json: protocols[0]: field 'launch_latency' is 2s; a stack's latencies are at most 1s");
  CHECK(error_of("[1]") == "s.json: a stack is a JSON object");
}
