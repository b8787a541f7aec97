#include <catch2/catch.hpp>

#include "topology/base/errors.hpp"
#include "topology/base/params.hpp"

using namespace ultrasim;

namespace {
ParamSet sample() {
  return ParamSet({{"link_bandwidth", "100GBps", Unit::kRate, "bandwidth", "assumption"},
                   {"link_latency", "500ns", Unit::kTime, "latency", "assumption"},
                   {"reduce_bandwidth", "inf", Unit::kOptRate, "reduction rate", "assumption"},
                   {"chip_forwarding", "true", Unit::kBool, "forward", "assumption"}});
}
}  // namespace

TEST_CASE("parameters hold their defaults in base units until overridden") {
  ParamSet p = sample();
  CHECK(p.number("link_bandwidth") == 1e11);
  CHECK(p.number("link_latency") == Approx(5e-7));
  CHECK_FALSE(p.optional_rate("reduce_bandwidth").has_value());
  CHECK(p.flag("chip_forwarding"));
  p.apply({{"link_bandwidth", "200GBps"}, {"reduce_bandwidth", "1TBps"}, {"chip_forwarding", "off"}});
  CHECK(p.number("link_bandwidth") == 2e11);
  CHECK(p.optional_rate("reduce_bandwidth") == 1e12);
  CHECK_FALSE(p.flag("chip_forwarding"));
  CHECK(p.text("link_bandwidth") == "200GBps");
}

TEST_CASE("an unknown parameter is an error that suggests the closest name") {
  ParamSet p = sample();
  CHECK_THROWS_WITH(p.apply({{"link_bandwith", "1GBps"}}),
                    Catch::Contains("unknown parameter 'link_bandwith'; did you mean 'link_bandwidth'?"));
  CHECK_THROWS_AS(p.apply({{"nothing_like_it", "1"}}), InputError);
}

TEST_CASE("a bad value names the parameter and the expected form") {
  ParamSet p = sample();
  CHECK_THROWS_WITH(p.apply({{"link_bandwidth", "0"}}), Catch::Contains("link_bandwidth"));
  CHECK_THROWS_WITH(p.apply({{"link_latency", "-1us"}}), Catch::Contains("link_latency"));
  CHECK_THROWS_AS(p.apply({{"chip_forwarding", "sometimes"}}), InputError);
}

TEST_CASE("apply_known leaves names declared elsewhere for the caller") {
  ParamSet p = sample();
  auto rest = p.apply_known({{"link_latency", "1us"}, {"transfer_overhead", "2us"}});
  REQUIRE(rest.size() == 1);
  CHECK(rest[0].first == "transfer_overhead");
  CHECK(p.number("link_latency") == Approx(1e-6));
}

TEST_CASE("parameters serialise with unset rates as null and booleans as booleans") {
  auto j = sample().to_json();
  CHECK(j["reduce_bandwidth"].is_null());
  CHECK(j["chip_forwarding"] == true);
  CHECK(j["link_bandwidth"] == 1e11);
}

TEST_CASE("the name=value syntax and duplicate declarations") {
  CHECK(split_assignment("a=b=c") == std::make_pair(std::string("a"), std::string("b=c")));
  CHECK_THROWS_AS(split_assignment("novalue"), InputError);
  CHECK_THROWS_AS(split_assignment("=3"), InputError);
  ParamSet p = sample();
  CHECK_THROWS_AS(p.declare({{"link_latency", "1us", Unit::kTime, "again", "x"}}), InputError);
}
