// ParamTable: a struct of typed parameters, each declared once beside the member it fills.
#include <catch2/catch.hpp>

#include <optional>
#include <stdexcept>
#include <string>

#include "topology/base/param_table.hpp"

using namespace ultrasim;

namespace {

struct Tier {
  double bandwidth = 0, latency = 0;
};
struct Fabric {
  int chips = 0;
  bool forwarding = false;
  std::string mode;
  std::optional<double> reduce = 1.0;  // not nullopt, so that reading "inf" is seen to clear it
  Tier tier;
  int planes = 7;  // optional: kept where a set does not declare it
  bool planes_declared = false;
};

ParamTable<Tier> tier_table() {
  return ParamTable<Tier>{}
      .add({"tier_bandwidth", "100GBps", Unit::kRate, "rate", "assumption"}, &Tier::bandwidth)
      .add({"tier_latency", "500ns", Unit::kTime, "latency", "assumption"}, &Tier::latency);
}

const ParamTable<Fabric>& fabric_table() {
  static const ParamTable<Fabric> table =
      ParamTable<Fabric>{}
          .add({"chips", "8", Unit::kCount, "chips", "assumption"}, &Fabric::chips)
          .add({"forwarding", "true", Unit::kBool, "chips forward", "assumption"}, &Fabric::forwarding)
          .add({"mode", "crossbar", Unit::kChoice, "switch", "assumption", {"crossbar", "chips"}},
               &Fabric::mode)
          .nest(tier_table(), &Fabric::tier)
          .add({"reduce", "inf", Unit::kOptRate, "reduction", "assumption"}, &Fabric::reduce)
          .add_optional({"planes", "5", Unit::kCount, "planes", "assumption"}, &Fabric::planes,
                        &Fabric::planes_declared);
  return table;
}

}  // namespace

TEST_CASE("a table's declarations are its specs, in order, nested groups where they are nested") {
  std::vector<std::string> names;
  for (const ParamSpec& spec : fabric_table().specs()) names.push_back(spec.name);
  CHECK(names == std::vector<std::string>{"chips", "forwarding", "mode", "tier_bandwidth", "tier_latency",
                                          "reduce", "planes"});
  CHECK(fabric_table().specs()[3].default_value == "100GBps");
}

TEST_CASE("read() fills every member with the value in effect, in its type") {
  ParamSet params(fabric_table().specs());
  Fabric f = fabric_table().read(params);
  CHECK(f.chips == 8);
  CHECK(f.forwarding);
  CHECK(f.mode == "crossbar");
  CHECK(f.tier.bandwidth == 1e11);
  CHECK(f.tier.latency == Approx(5e-7));
  CHECK_FALSE(f.reduce.has_value());  // inf: unset
  CHECK(f.planes == 5);
  CHECK(f.planes_declared);

  params.apply({{"chips", "144"},
                {"forwarding", "off"},
                {"mode", "chips"},
                {"tier_bandwidth", "320GBps"},
                {"reduce", "1TBps"},
                {"planes", "2"}});
  f = fabric_table().read(params);
  CHECK(f.chips == 144);
  CHECK_FALSE(f.forwarding);
  CHECK(f.mode == "chips");
  CHECK(f.tier.bandwidth == 3.2e11);
  CHECK(f.reduce == 1e12);
  CHECK(f.planes == 2);
}

TEST_CASE("an optional parameter a set does not declare keeps the struct's default") {
  std::vector<ParamSpec> specs = fabric_table().specs();
  specs.pop_back();  // no "planes"
  const Fabric f = fabric_table().read(ParamSet(specs));
  CHECK(f.planes == 7);
  CHECK_FALSE(f.planes_declared);
  CHECK(f.chips == 8);
}

TEST_CASE("a member whose type cannot hold the unit is refused when the table is built") {
  CHECK_THROWS_AS(ParamTable<Fabric>{}.add({"x", "1GBps", Unit::kRate, "m", "s"}, &Fabric::chips),
                  std::logic_error);
  CHECK_THROWS_AS(ParamTable<Fabric>{}.add({"x", "1", Unit::kCount, "m", "s"}, &Fabric::forwarding),
                  std::logic_error);
  CHECK_THROWS_AS(ParamTable<Fabric>{}.add({"x", "1", Unit::kRatio, "m", "s"}, &Fabric::mode),
                  std::logic_error);
  CHECK_THROWS_AS(ParamTable<Fabric>{}.add({"x", "1GBps", Unit::kRate, "m", "s"}, &Fabric::reduce),
                  std::logic_error);
  CHECK_NOTHROW(
      ParamTable<Tier>{}.add({"x", "1", Unit::kCount, "m", "s"}, &Tier::latency));  // a count as a real
}
