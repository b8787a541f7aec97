#include <catch2/catch.hpp>

#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"

using namespace ultrasim;

TEST_CASE("sizes parse in decimal and binary units, plain numbers are bytes") {
  CHECK(parse_bytes("4096") == 4096);
  CHECK(parse_bytes("64MiB") == 67108864);
  CHECK(parse_bytes("1GiB") == 1073741824);
  CHECK(parse_bytes("1GB") == 1000000000);
  CHECK(parse_bytes("1.5KiB") == 1536);
  CHECK(parse_bytes("2kB") == 2000);
  CHECK(parse_bytes("0") == 0);
  CHECK(parse_bytes("1e3") == 1000);
}

TEST_CASE("malformed or impossible sizes are rejected with the text in the message") {
  for (const char* bad : {"", "abc", "-1", "1.3B", "12XB", "1e400", "64 MiB", "MiB", "1.5", "nan"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_bytes(bad), InputError);
  }
  CHECK_THROWS_WITH(parse_bytes("12XB"), Catch::Contains("'12XB'"));
}

TEST_CASE("rates parse bytes and bits per second and must be positive") {
  CHECK(parse_rate("100GBps") == 1e11);
  CHECK(parse_rate("400Gbps") == 5e10);
  CHECK(parse_rate("1GiBps") == 1073741824.0);
  CHECK(parse_rate("1e9") == 1e9);
  for (const char* bad : {"0", "0GBps", "-1GBps", "fast", "100GB/s"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_rate(bad), InputError);
  }
}

TEST_CASE("times parse s, ms, us, ns, ps and plain seconds") {
  CHECK(parse_time("1.5us") == Approx(1.5e-6).epsilon(1e-15));
  CHECK(parse_time("500ns") == Approx(5e-7).epsilon(1e-15));
  CHECK(parse_time("2ms") == Approx(2e-3).epsilon(1e-15));
  CHECK(parse_time("1s") == 1.0);
  CHECK(parse_time("3e-6") == 3e-6);
  CHECK(parse_time("0") == 0.0);
  for (const char* bad : {"-1us", "1.5 us", "xs", "1h"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_time(bad), InputError);
  }
}

TEST_CASE("ratios accept fractions, booleans and counts are strict") {
  CHECK(parse_ratio("60/64") == 0.9375);
  CHECK(parse_ratio("0.5") == 0.5);
  CHECK_THROWS_AS(parse_ratio("1/0"), InputError);
  CHECK(parse_bool("on"));
  CHECK_FALSE(parse_bool("false"));
  CHECK_THROWS_AS(parse_bool("maybe"), InputError);
  CHECK(parse_count("144") == 144);
  for (const char* bad : {"0", "-3", "3.5", "", "12345678901"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_count(bad), InputError);
  }
}

TEST_CASE("rates print in GB/s as nccl-tests does") {
  CHECK(format_rate(2.4e11) == "240 GB/s");
}
