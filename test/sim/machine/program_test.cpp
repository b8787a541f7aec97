// The engines run any Program on any Machine (sim/machine/program.hpp), not only collectives: a test-only
// relay program states what an engine owes every workload: its times, the chips that take no part, the
// stragglers it applies, the program's own verdict, and a failing chip reported as the run's failure.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "sim/engines/runner.hpp"
#include "sim_child.hpp"
#include "topology/base/errors.hpp"

using namespace ultrasim;

namespace {

constexpr double kRelayBandwidth = 100e9, kRelayLatency = 500e-9;  // generators' defaults

// Chip 0 sends `bytes` to chip 1, which forwards them to chip 2 once they arrived, and so on up to chip
// `last`; the chips after it take no part. Its verdict counts the chips that did not get chip 0's data,
// plus `extra_wrong`; chip `fails` (if >= 0) throws instead of forwarding.
class Relay : public Program {
 public:
  Relay(int last, std::uint64_t bytes, int extra_wrong = 0, int fails = -1)
      : last_(last), bytes_(bytes), extra_wrong_(extra_wrong), fails_(fails), got_(last + 1) {}
  bool takes_part(int rank) const override { return rank <= last_; }
  void run(Transport& t) override {
    const int r = t.rank();
    Message data{{Piece{0, bytes_, contribution_of(0, 0)}}};
    if (r > 0) {
      RequestPtr in = t.recv(r - 1, 0);
      t.wait_all({in});
      data = in->message;
    }
    if (r == fails_) throw std::runtime_error("out of buffers");
    got_[r] = data.pieces.at(0).content;
    if (r < last_) t.wait_all({t.send(r + 1, data, 0)});
  }
  Verdict verdict() const override {
    Verdict v{static_cast<std::uint64_t>(extra_wrong_), extra_wrong_ ? "told to" : ""};
    for (const Contribution& c : got_) v.wrong += c == contribution_of(0, 0) ? 0 : 1;
    return v;
  }

 private:
  int last_;
  std::uint64_t bytes_;
  int extra_wrong_, fails_;
  std::vector<Contribution> got_;
};

// One relay over the chips 0..last of switch:6 with `faults`; {time, verdict.wrong, chip finish times...}.
std::vector<double> relay_run(Engine engine, int last, std::uint64_t bytes,
                              std::vector<std::string> faults = {}, int extra_wrong = 0) {
  Machine machine = build_machine("switch:6", {}, {}, false);
  machine.faults = plan_faults(faults, *machine.topology);
  Relay relay(last, bytes, extra_wrong);
  RunOptions options;
  options.engine = engine;
  const SimResult result = simulate(machine, relay, options);
  std::vector<double> out{result.time_s, static_cast<double>(result.verdict.wrong)};
  out.insert(out.end(), result.chip_finish.begin(), result.chip_finish.end());
  return out;
}

}  // namespace

TEST_CASE("an engine runs any program: a relay over k chips takes k - 1 hops of α + n/β") {
  const double hop = 2 * kRelayLatency + 1e6 / kRelayBandwidth;  // chip, switch, chip
  for (Engine engine : {Engine::kSimGrid, Engine::kContentionFree}) {
    INFO(engine_name(engine));
    const auto out = test::in_child([engine] { return relay_run(engine, 3, 1000000); });
    REQUIRE(out.size() == 8);
    CHECK(out[0] == Approx(3 * hop).epsilon(1e-12));
    CHECK(out[1] == 0);
    CHECK(out[2 + 3] == Approx(3 * hop).epsilon(1e-12));  // the last chip of the relay
    CHECK(out[2 + 4] == 0);                               // chips that take no part finish at once
    CHECK(out[2 + 5] == 0);
  }
}

TEST_CASE("an engine applies the machine's stragglers to every program, never to chips that take no part") {
  const double hop = 2 * kRelayLatency + 1e6 / kRelayBandwidth;
  const auto out = test::in_child([] {
    return relay_run(Engine::kContentionFree, 3, 1000000, {"late-chip:0@5us", "late-chip:5@1ms"});
  });
  REQUIRE(out.size() == 8);
  CHECK(out[0] == Approx(5e-6 + 3 * hop).epsilon(1e-12));
  CHECK(out[2 + 5] == 0);
}

TEST_CASE("the run's verdict is the program's") {
  const auto out = test::in_child([] { return relay_run(Engine::kSimGrid, 2, 64, {}, 2); });
  REQUIRE(out.size() >= 2);
  CHECK(out[1] == 2);
}

TEST_CASE("a program's chip that throws fails the run, naming the chip") {
  const auto out = test::in_child([] {
    Machine machine = build_machine("switch:4", {}, {}, false);
    Relay relay(3, 64, 0, 2);
    RunOptions options;
    try {
      simulate(machine, relay, options);
    } catch (const SimulationError& e) {
      return std::vector<double>{
          std::string(e.what()).find("chip2: out of buffers") != std::string::npos ? 1.0 : 0.0};
    }
    return std::vector<double>{-1};
  });
  REQUIRE(out.size() == 1);
  CHECK(out[0] == 1);
}

TEST_CASE("a machine's --set names are checked against the model's and the other owners' names") {
  CHECK_THROWS_WITH(build_machine("switch:4", {{"chip_flopz", "1"}}, {"chip_flops"}, false),
                    Catch::Contains("did you mean 'chip_flops'"));
  const Machine m = build_machine("switch:4", {{"link_bandwidth", "50GBps"}}, {}, false);
  CHECK(m.p() == 4);
  CHECK(m.routes->message_bandwidth(0, 1) == Approx(50e9));
  CHECK(m.faults.empty());
}

TEST_CASE("a part selected from a built machine is the machine its SPEC@first-last spec builds") {
  const Machine whole = build_machine("trn3", {}, {}, true);
  for (const auto& [first, last] : std::vector<std::pair<int, int>>{{0, 35}, {36, 143}, {70, 73}}) {
    const std::string spec = "trn3@" + std::to_string(first) + "-" + std::to_string(last);
    INFO(spec);
    const Machine part = select_chips(whole, first, last, true);
    const Machine built = build_machine(spec, {}, {}, true);
    CHECK(part.topology->spec() == spec);
    REQUIRE(part.p() == last - first + 1);
    CHECK(part.p() == built.p());
    CHECK(part.stack->name == built.stack->name);
    CHECK(part.protocol.name == built.protocol.name);
    CHECK(part.in_flight_per_chip == built.in_flight_per_chip);
    REQUIRE(part.topology->links().size() == built.topology->links().size());
    for (std::size_t l = 0; l < built.topology->links().size(); ++l) {
      CHECK(part.topology->links()[l].bandwidth() == built.topology->links()[l].bandwidth());
      CHECK(part.topology->links()[l].latency == built.topology->links()[l].latency);
    }
    for (int a = 0; a < part.p(); a += 5) {
      CHECK(part.topology->fabric_rank(a) == first + a);
      for (int b = 0; b < part.p(); b += 7) {
        if (a == b) continue;
        CHECK(part.routes->route_latency(a, b) == built.routes->route_latency(a, b));
        std::vector<int> ours, theirs;  // the same links, in the same order
        for (const Hop& h : part.routes->between(a, b).hops) ours.push_back(h.link);
        for (const Hop& h : built.routes->between(a, b).hops) theirs.push_back(h.link);
        CHECK(ours == theirs);
      }
    }
  }
}
