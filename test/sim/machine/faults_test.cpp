// Reading --fault specs and turning them into a plan: the five kinds, names and globs, times with units,
// the routing epochs and bandwidth changes they make, and one precise error per kind of mistake.
#include <catch2/catch.hpp>

#include "sim/machine/faults.hpp"
#include "topology/base/errors.hpp"
#include "topology/topology_helpers.hpp"

using namespace ultrasim;

namespace {

std::string error_of(const std::string& spec, const Topology& t) {
  try {
    parse_fault(spec, t);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

int link_index(const Topology& t, const std::string& name) {
  for (const Link& link : t.links())
    if (link.name == name) return link.index;
  FAIL("no link " << name);
  return -1;
}

}  // namespace

TEST_CASE("link-down names one link, a time with units and an optional end (exponents are not ranges)") {
  Topology t = test::build("torus:4x4");
  Fault f = parse_fault("link-down:chip1-chip2@2us", t);
  CHECK(f.kind == Fault::Kind::kLinkDown);
  CHECK(f.names == std::vector<std::string>{"chip1-chip2"});
  CHECK(f.links == std::vector<int>{link_index(t, "chip1-chip2")});
  CHECK(f.at == Approx(2e-6).epsilon(1e-12));
  CHECK(!f.until);
  Fault g = parse_fault("link-down:chip1-chip2@1e-6-3e-6", t);
  CHECK(g.at == Approx(1e-6).epsilon(1e-12));
  REQUIRE(g.until);
  CHECK(*g.until == Approx(3e-6).epsilon(1e-12));
}

TEST_CASE("a glob names several links, and switch-down takes every link of the matched switches") {
  Topology t = test::build("torus:4x4");
  Fault f = parse_fault("link-down:chip5-*@0", t);
  CHECK(f.names == std::vector<std::string>{"chip5-chip6", "chip5-chip9"});
  Topology trn3 = test::build("trn3");
  Fault s = parse_fault("switch-down:server0_switch@1us", trn3);
  CHECK(s.names == std::vector<std::string>{"server0_switch"});
  CHECK(s.links.size() == 4);  // its four chips
  Fault both = parse_fault("switch-down:rack*_switch@1us", trn3);
  CHECK(both.names == std::vector<std::string>{"rack0_switch", "rack1_switch"});
  CHECK(both.links.size() == 144);  // every chip's link to its rack switch
}

TEST_CASE("degrade, slow-chip and late-chip carry their fraction, factor and time") {
  Topology t = test::build("switch:4");
  Fault d = parse_fault("degrade:chip1-switch0=0.25@1us-2us", t);
  CHECK(d.value == 0.25);
  CHECK(d.at == Approx(1e-6).epsilon(1e-12));
  Fault s = parse_fault("slow-chip:3=2.5", t);
  CHECK((s.rank == 3 && s.value == 2.5));
  Fault l = parse_fault("late-chip:0@10us", t);
  CHECK((l.rank == 0 && l.at == Approx(10e-6).epsilon(1e-12)));
}

TEST_CASE("each malformed fault is one error naming the bad part and the expected form") {
  Topology t = test::build("switch:4");
  const std::vector<std::pair<std::string, std::string>> cases{
      {"link-dwn:chip1-switch0@1us", "did you mean 'link-down'"},
      {"link-down:chip1-swtch0@1us", "did you mean 'chip1-switch0'"},
      {"link-down:chip1-switch0", "no '@TIME'"},
      {"link-down:chip1-switch0@soon", "expected link-down:NAME@TIME[-TIME]"},
      {"link-down:chip1-switch0@3us-1us", "not after the start"},
      {"link-down:", "nothing after 'link-down'"},
      {"switch-down:switch9@1us", "no switch of switch:4 is named 'switch9'"},
      {"degrade:chip1-switch0=0@1us", "not in (0, 1]"},
      {"degrade:chip1-switch0=1.5", "not in (0, 1]"},
      {"degrade:chip1-switch0", "no '=FRACTION'"},
      {"slow-chip:4=2", "rank 4 is out of range"},
      {"slow-chip:1=0.5", "below 1"},
      {"slow-chip:-1=2", "'-1' is not a chip rank"},
      {"late-chip:1@1us-2us", "give one time"},
      {"late-chip:x@1us", "'x' is not a chip rank"},
  };
  for (const auto& [spec, fragment] : cases) {
    INFO(spec);
    std::string message = error_of(spec, t);
    CHECK_THAT(message, Catch::Contains(fragment));
    CHECK_THAT(message, Catch::StartsWith("invalid --fault '" + spec + "'"));
  }
}

TEST_CASE("the plan has an epoch at every failure and recovery, each with the links down then") {
  Topology t = test::build("torus:4x4");
  FaultPlan plan = plan_faults({"link-down:chip1-chip2@1us-3us", "link-down:chip5-chip6@2us"}, t);
  REQUIRE(plan.epochs.size() == 4);  // fault-free, {1-2}, {1-2, 5-6}, {5-6}
  const int a = link_index(t, "chip1-chip2"), b = link_index(t, "chip5-chip6");
  auto down = [&](int e) {
    std::vector<int> out;
    for (std::size_t l = 0; l < plan.epochs[e].down.size(); ++l)
      if (plan.epochs[e].down[l]) out.push_back(static_cast<int>(l));
    return out;
  };
  CHECK(down(0).empty());
  CHECK((plan.epochs[1].at == Approx(1e-6).epsilon(1e-12) && down(1) == std::vector<int>{a}));
  CHECK((plan.epochs[2].at == Approx(2e-6).epsilon(1e-12) &&
         down(2) == std::vector<int>{std::min(a, b), std::max(a, b)}));
  CHECK((plan.epochs[3].at == Approx(3e-6).epsilon(1e-12) && down(3) == std::vector<int>{b}));
  CHECK(plan.epochs[2].cause.size() == 2);
  CHECK(plan.touches_links());
}

TEST_CASE("overlapping degradations of one link multiply, stragglers fill per-chip scale and start") {
  Topology t = test::build("switch:4");
  FaultPlan plan = plan_faults({"degrade:chip1-switch0=0.5@1us-3us", "degrade:chip1-switch0=0.5@2us",
                                "slow-chip:2=2", "slow-chip:2=1.5", "late-chip:3@5us"},
                               t);
  REQUIRE(plan.bandwidth_changes.size() == 3);
  CHECK(plan.bandwidth_changes[0].fraction == 0.5);
  CHECK(plan.bandwidth_changes[1].fraction == 0.25);  // both at 2 us
  CHECK(plan.bandwidth_changes[2].fraction == 0.5);   // the first ended at 3 us
  CHECK(plan.compute_scale == std::vector<double>{1, 1, 3, 1});
  CHECK(plan.start[3] == Approx(5e-6).epsilon(1e-12));
  CHECK(plan.epochs.size() == 1);
  FaultPlan stragglers = plan_faults({"late-chip:1@1us"}, t);
  CHECK(!stragglers.touches_links());
}
