// `ultrasim calibrate`: recovers a known stack from the logs it produces, and on a published table
// improves the held-out error.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "cli_runner.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "workloads/experiments/calibrate.hpp"

using namespace ultrasim::test;

namespace {

const std::string kHeader =
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
    "busbw #wrong\n";

// An nccl-tests log of `all_reduce_perf` on switch:8 under `stack`, one row per size, times from the
// simulation (out-of-place = in-place).
std::string generated_log(const std::string& stack, const std::vector<std::string>& sizes) {
  std::string log = "# nThread 1 nGpus 8 minBytes 8 maxBytes 1048576 step: 4(factor)\n" + kHeader;
  for (const std::string& size : sizes) {
    auto j = run_json({"--topology", "switch:8", "--collective", "allreduce", "--algorithm", "auto", "--size",
                       size, "--stack", stack});
    char row[256];
    const double us = j["time_s"].get<double>() * 1e6;
    std::snprintf(row, sizeof row, "%12llu %12llu float sum -1 %10.4f %6.2f %6.2f 0 %10.4f %6.2f %6.2f 0\n",
                  j["bytes"].get<unsigned long long>(), j["count"].get<unsigned long long>(), us, 0.0, 0.0,
                  us, 0.0, 0.0);
    log += row;
  }
  return log;
}

}  // namespace

TEST_CASE("calibrate recovers the launch latency, step latency and efficiency a log was made with",
          "[calibrate]") {
  const std::string known = temp_path("known.json");
  std::ofstream(known) << R"({"name": "known", "description": "d", "protocols": [{"name": "p",
      "launch_latency": "7us", "step_latency": "2us", "network_step_latency": "0us", "efficiency": 0.8,
      "source": "test"}]})";
  // Sizes whose auto picks (one-shot, two-shot) meet no contention on a switch, so model = simulation;
  // one step (one-shot) and two (two-shot) tell launch from step latency.
  const std::string log = temp_path("known.log");
  std::ofstream(log) << generated_log(known, {"8", "1024", "4096", "16384", "65536", "262144", "1048576"});
  const std::string fitted = temp_path("fitted.json");
  CliResult r = run_cli({"calibrate", "--topology", "switch:8", "--from", log, "--hold-out", "4096",
                         "--format", "json", "-o", fitted});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& p = j["fitted"]["protocols"][0];
  CHECK(ultrasim::parse_time(p["launch_latency"].get<std::string>()) == Approx(7e-6).epsilon(0.01));
  CHECK(ultrasim::parse_time(p["step_latency"].get<std::string>()) == Approx(2e-6).epsilon(0.01));
  CHECK(p["efficiency"].get<double>() == Approx(0.8).epsilon(0.01));
  CHECK(j["geomean_error"]["held_out_after"].get<double>() < 1e-3);
  CHECK(j["geomean_error"]["held_out_before"].get<double>() > 0.5);  // ideal: none of the 7 + 2 us
  CHECK(j["points"].size() == 7);
  // The written stack runs: it gives the log's times back.
  auto again = run_json({"--topology", "switch:8", "--collective", "allreduce", "--algorithm", "auto",
                         "--size", "65536", "--stack", fitted});
  CHECK(again["time_s"].get<double>() * 1e6 ==
        Approx(j["points"][4]["measured_s"].get<double>() * 1e6).epsilon(1e-3));
}

TEST_CASE(
    "calibrate on a published NVL72 table, as text or as nccl-tests JSON, improves the held-out error "
    "over ideal more than 3x",
    "[calibrate]") {
  const std::string data = std::string(ULTRASIM_SOURCE_DIR) + "/test/data/calibrate/gb200_nvl72_coreweave";
  const auto fit = [](const std::string& log) {
    CliResult r = run_cli(
        {"calibrate", "--topology", "nvl72", "--from", log, "--hold-out", "1GiB,4GiB", "--format", "json"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto j = fit(data + ".log");
  // The fabric alone at the held-out sizes (its auto: the whole catalogue).
  double ideal = 0;
  int held = 0;
  for (const auto& point : j["points"]) {
    if (!point["held_out"].get<bool>()) continue;
    auto run = run_json({"--topology", "nvl72", "--collective", "allreduce", "--algorithm", "auto", "--size",
                         std::to_string(point["bytes"].get<unsigned long long>()), "--stack", "ideal",
                         "--engine", "auto", "--no-link-stats"});
    ideal += std::abs(std::log(run["model_s"].get<double>() / point["measured_s"].get<double>())), ++held;
  }
  REQUIRE(held == 2);
  const double ideal_error = std::exp(ideal / held) - 1;
  const double after = j["geomean_error"]["held_out_after"].get<double>();
  CHECK(ideal_error > 0.8);        // 84 %: the fabric alone is far faster than NCCL
  CHECK(after * 3 < ideal_error);  // 2.4 %
  // The built-in nccl stack on nvl72 (NVLS with its warm-up fitted on 1 GiB and 8 GiB) is as close already:
  // the fit of one protocol's terms stays within a point of it.
  CHECK(after < 0.03);
  CHECK(j["geomean_error"]["held_out_before"].get<double>() < 0.02);  // 1.9 %
  const auto& p = j["fitted"]["protocols"][0];
  CHECK(ultrasim::parse_time(p["launch_latency"].get<std::string>()) == Approx(52.0054e-6).margin(1e-9));
  CHECK(ultrasim::parse_time(p["step_latency"].get<std::string>()) == Approx(1.5526e-6).margin(1e-9));
  CHECK(p["efficiency"].get<double>() == 1.0);

  // The same table as nccl-tests' -J JSON (test/data/calibrate/README.md): its points are the text's to
  // the bit (the next test), so the fitted stack, as written, and the errors are the same. The fit is the
  // text's fit again: under the sanitizers, where it takes over a minute, the normal suite's check stands.
  if (kSanitized) return;
  const auto from_json = fit(data + ".json");
  CHECK(from_json["fitted"] == j["fitted"]);
  CHECK(from_json["geomean_error"] == j["geomean_error"]);
  REQUIRE(from_json["points"].size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    auto a = j["points"][i], b = from_json["points"][i];
    CHECK(b["source"] == data + ".json:results[" + std::to_string(i) + "]");
    a.erase("source"), b.erase("source");
    CHECK(b == a);  // bytes, held_out, measured_s, before and after with their algorithms
  }
}

TEST_CASE("calibrate reads nccom-test's table and refuses logs and hold-outs it cannot use", "[calibrate]") {
  const std::string nccom = temp_path("nccom.txt");
  std::ofstream(nccom) << "    size(B)    count(elems)    type    time(us)    algbw(GB/s)    busbw(GB/s)\n"
                          "       1024             256    fp32       59.8          0.02          0.03\n"
                          "    1048576          262144    fp32      120.5          8.70         16.31\n";
  const auto points = ultrasim::read_measured_log(nccom);
  REQUIRE(points.size() == 2);
  CHECK(points[1].bytes == 1048576);
  CHECK(points[1].time_s == Approx(120.5e-6).epsilon(1e-12));
  const std::string empty = temp_path("empty.log");
  std::ofstream(empty) << "# nothing here\n";
  expect_input_error({"calibrate", "--topology", "switch:8", "--from", empty},
                     "holds no result row of nccl-tests");
  const std::string bad = temp_path("bad.log");
  std::ofstream(bad) << kHeader << "1024 256 float sum -1 fast 0.1 0.1 0 1 0.1 0.1 0\n";
  expect_input_error({"calibrate", "--topology", "switch:8", "--from", bad},
                     ":2: time 'fast' is not a positive");
  expect_input_error({"calibrate", "--topology", "switch:8", "--from", nccom, "--hold-out", "4096"},
                     "--hold-out 4096: no measured point has that size");
  expect_input_error({"calibrate", "--topology", "switch:8", "--from", nccom, "--hold-out", "1024,1MiB"},
                     "every measured point is held out");
}

TEST_CASE(
    "calibrate merges rows of one size into their geometric mean, warns when the fit is under-determined, "
    "and refuses absurd times",
    "[calibrate]") {
  const std::string header =
      "    size(B)    count(elems)    type    time(us)    algbw(GB/s)    busbw(GB/s)\n";
  auto row = [](const char* bytes, const char* us) {
    return std::string("   ") + bytes + "   256    fp32    " + us + "    0.02    0.03\n";
  };
  // Two runs of three sizes: the fit sees 3 points, each at the geometric mean of its two times.
  const std::string twice = temp_path("twice.txt");
  std::ofstream(twice) << header << row("1024", "40") << row("65536", "50") << row("1048576", "120")
                       << row("1024", "90") << row("65536", "50") << row("1048576", "120");
  CliResult r = run_cli({"calibrate", "--topology", "switch:8", "--from", twice, "--format", "json"});
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["points"].size() == 3);
  CHECK(j["points"][0]["measured_s"].get<double>() == Approx(std::sqrt(40.0 * 90.0) * 1e-6).epsilon(1e-12));
  CHECK(j["points"][1]["measured_s"].get<double>() == Approx(50e-6).epsilon(1e-12));
  CHECK_THAT(r.err, Catch::Contains("calibrate: 2 rows of 1024 bytes (40.00 to 90.00 us): fitted on their "
                                    "geometric mean, 60.00 us"));
  CHECK_THAT(r.err, !Catch::Contains("under-determined"));
  // Two sizes for three unknowns: fitted, with a warning.
  const std::string two = temp_path("two.txt");
  std::ofstream(two) << header << row("1024", "40") << row("1048576", "120");
  r = run_cli({"calibrate", "--topology", "switch:8", "--from", two});
  CHECK(r.status == 0);
  CHECK_THAT(r.err,
             Catch::Contains("calibrate: 2 fitted size(s) for three unknowns (launch and step latency, "
                             "efficiency): the fit is under-determined"));
  // A time past 1e6 s is a broken log, not a measurement.
  const std::string absurd = temp_path("absurd.txt");
  std::ofstream(absurd) << header << row("1024", "40") << row("1048576", "2e12");
  expect_input_error({"calibrate", "--topology", "switch:8", "--from", absurd},
                     "time '2e12' us is over 1e6 s; no collective of a log takes that long");
}

TEST_CASE(
    "calibrate reads nccl-tests' -J JSON: the NVL72 table as JSON gives the text table's points exactly",
    "[calibrate]") {
  const std::string data = std::string(ULTRASIM_SOURCE_DIR) + "/test/data/calibrate/gb200_nvl72_coreweave";
  const auto text = ultrasim::read_measured_log(data + ".log");
  const auto json = ultrasim::read_measured_log(data + ".json");
  const std::vector<std::uint64_t> bytes{536870912, 1073741824, 2147483648, 4294967296, 8589934592};
  const std::vector<double> us{1806.7, 3108.8, 5589.1, 10094, 20299};  // the out-of-place column
  REQUIRE(text.size() == 5);
  REQUIRE(json.size() == 5);
  for (std::size_t i = 0; i < json.size(); ++i) {
    CHECK(json[i].bytes == bytes[i]);
    CHECK(json[i].bytes == text[i].bytes);
    CHECK(json[i].time_s == text[i].time_s);  // exactly: "1806.700000" and "1806.7" are one double
    CHECK(json[i].time_s == Approx(us[i] * 1e-6).epsilon(1e-12));
    CHECK(json[i].source == data + ".json:results[" + std::to_string(i) + "]");
    CHECK(text[i].source == data + ".log:" + std::to_string(7 + i));
  }
  // JSON is told by its first character that is not blank.
  const std::string indented = temp_path("indented.json");
  std::ofstream(indented) << "\n \t" << read_file(data + ".json");
  const auto again = ultrasim::read_measured_log(indented);
  REQUIRE(again.size() == 5);
  CHECK(again[4].bytes == 8589934592);
  CHECK(again[4].time_s == text[4].time_s);
}

TEST_CASE(
    "calibrate refuses a JSON log without results, with a size or time not a number, or missing a field",
    "[calibrate]") {
  int files = 0;
  const auto log = [&](const std::string& text) {
    return temp_file("bad" + std::to_string(++files) + ".json", text);
  };
  // One nccl-tests results entry, as -J writes it, with `out_of_place` in place of its own.
  const auto row = [](const std::string& size, const std::string& out_of_place) {
    return R"({"size":)" + size +
           R"(,"count":256,"type":"float","redop":"sum","root":"    -1","out_of_place":)" + out_of_place +
           R"(,"in_place":{"time":60.1,"alg_bw":0.02,"bus_bw":0.03,"nwrong":0.0},"actual_iterations":20,)"
           R"("experiment_name":""})";
  };
  const std::string good = R"({"time":59.800000,"alg_bw":0.020000,"bus_bw":0.030000,"nwrong":0.000000})";
  const auto results = [](const std::string& rows) { return R"({"version":3,"results":[)" + rows + "]}"; };
  const auto refused = [&](const std::string& text, const std::string& fragment) {
    INFO(text);
    expect_input_error({"calibrate", "--topology", "switch:8", "--from", log(text)}, fragment);
  };

  // The well-formed row is read: what follows fails for the one thing each changes.
  const auto one = ultrasim::read_measured_log(log(results(row("1024", good))));
  REQUIRE(one.size() == 1);
  CHECK(one[0].bytes == 1024);
  CHECK(one[0].time_s == Approx(59.8e-6).epsilon(1e-12));

  SECTION("no results") {
    refused(results(""), "holds no results: nccl-tests -J JSON with a non-empty \"results\" list expected");
    refused(R"({"version":3,"start_time":"2025-04-01 00:00:00","errors":[""]})", "holds no results");
    refused(R"({"version":3,"results":{"size":1024}})", "holds no results");
    refused(R"([{"size":1024}])",
            "is JSON but not an object; nccl-tests -J writes one whose \"results\" list");
  }
  SECTION("not JSON") {
    const std::string whole = results(row("1024", good));
    refused(whole.substr(0, whole.size() / 2), "is not valid JSON: parse error at line 1, column ");
    // %lf of an infinite time, as nccl-tests would write it
    refused(results(row("1024", R"({"time":inf})")),
            "is not valid JSON: parse error at line 1, column 118: syntax error while parsing value - "
            "invalid literal");
    refused(results(row("1024", R"({"time":1e999})")),
            "field \"time\" is out of range (number overflow parsing '1e999')");
  }
  SECTION("a size or a time that is not a number") {
    refused(results(row("\"1KiB\"", good)), ":results[0]: size \"1KiB\" is not a whole number of bytes");
    refused(results(row("-8", good)), ":results[0]: size -8 is not a whole number of bytes");
    refused(results(row("1024.5", good)), ":results[0]: size 1024.5 is not a whole number of bytes");
    // nccl-tests writes a NaN as the string "nan"
    refused(results(row("1024", good) + "," + row("2048", R"({"time":"nan","alg_bw":"nan","bus_bw":"nan"})")),
            ":results[1]: out-of-place time \"nan\" is not a positive number of microseconds");
    refused(results(row("1024", R"({"time":0.000000})")),
            ":results[0]: out-of-place time 0.0 is not a positive number of microseconds");
  }
  SECTION("a results entry missing a field") {
    refused(results(R"({"count":256,"out_of_place":)" + good + "}"), ":results[0]: missing \"size\"");
    refused(results(R"({"size":1024,"in_place":)" + good + "}"), ":results[0]: missing \"out_of_place\"");
    refused(results(row("1024", R"({"alg_bw":0.02,"bus_bw":0.03})")),
            ":results[0]: missing \"out_of_place.time\"");
    refused(results(row("1024", "null")), ":results[0]: out_of_place null is not an object");
    refused(results(row("1024", R"({"cpu_time":3.1,"alg_bw":0.3,"bus_bw":0.6,"nwrong":null})")),
            ":results[0]: out_of_place has \"cpu_time\", not \"time\": a run with -C 1 reports the CPU time");
    refused(results("42"), ":results[0]: 42 is not a result object");
  }
}

TEST_CASE(
    "calibrate refuses an nccl-tests log of -C 1 (cputime), whose rows mix types or ops (-d all, -o all) or "
    "with a size over 2^53, text or JSON, and reads one of one type and op as before",
    "[calibrate]") {
  const auto log = temp_file;
  const auto row = [](const std::string& size, const std::string& type, const std::string& redop,
                      const std::string& us) {
    return "  " + size + "  256  " + type + "  " + redop + "  -1  " + us + "  0.02  0.03  0  " + us +
           "  0.02  0.03  0\n";
  };
  const std::string banner = "# nThread 1 nGpus 8 minBytes 1024 maxBytes 2048 step: 2(factor)\n#\n";
  // What every refusal of a mixed log says after the types and ops it saw.
  const std::string kMixed =
      ", as nccl-tests -d all or -o all prints them (every size again per type and op), and one fit takes "
      "one "
      "of each; rerun with one -d and one -o (e.g. -d float -o sum) or keep one type's and op's rows";

  // One type and op: every row read, as before.
  const std::string plain = log("plain.log", banner + kHeader + row("1024", "float", "sum", "59.8") +
                                                 row("2048", "float", "sum", "61"));
  const auto points = ultrasim::read_measured_log(plain);
  REQUIRE(points.size() == 2);
  CHECK(points[0].bytes == 1024);
  CHECK(points[0].time_s == Approx(59.8e-6).epsilon(1e-12));
  CHECK(points[1].source == plain + ":5");

  // -C 1: nccl-tests heads both time columns "cputime" (src/common.cu, writeResultHeader).
  std::string cputime_header = kHeader;
  for (auto at = cputime_header.find(" time "); at != std::string::npos;
       at = cputime_header.find(" time ", at))
    cputime_header.replace(at, 6, "cputime "), at += 8;
  const std::string cputime =
      log("cputime.log", banner + cputime_header + row("1024", "float", "sum", "3.1"));
  REQUIRE_THROWS_WITH(
      ultrasim::read_measured_log(cputime),
      cputime +
          ":3: the time columns are \"cputime\", not \"time\": a run with -C 1 reports the CPU "
          "time to launch, not the collective's; rerun without -C 1");
  expect_input_error({"calibrate", "--topology", "switch:8", "--from", cputime},
                     cputime + ":3: the time columns are \"cputime\"");

  // -d all: the sizes again for each datatype.
  const std::string types =
      log("types.log", banner + kHeader + row("1024", "int8", "sum", "20") +
                           row("2048", "int8", "sum", "21") + row("1024", "half", "sum", "22") +
                           row("2048", "half", "sum", "23") + row("1024", "float", "sum", "24"));
  REQUIRE_THROWS_WITH(
      ultrasim::read_measured_log(types),
      types +
          ":6: a row of half sum after rows of int8 sum: the log's rows name types int8, half, "
          "float and ops sum" +
          kMixed);
  expect_input_error({"calibrate", "--topology", "switch:8", "--from", types},
                     types + ":6: a row of half sum after rows of int8 sum");

  // -o all: the sizes again for each reduction op.
  const std::string ops =
      log("ops.log", banner + kHeader + row("1024", "float", "sum", "20") +
                         row("1024", "float", "prod", "21") + row("1024", "float", "max", "22"));
  REQUIRE_THROWS_WITH(ultrasim::read_measured_log(ops),
                      ops +
                          ":5: a row of float prod after rows of float sum: the log's rows name types float "
                          "and ops sum, prod, max" +
                          kMixed);

  // The same in -J JSON: the entries' "type" and "redop".
  const auto entry = [](const std::string& size, const std::string& type, const std::string& redop) {
    return R"({"size":)" + size + R"(,"count":256,"type":")" + type + R"(","redop":")" + redop +
           R"(","root":"    -1","out_of_place":{"time":59.8,"alg_bw":0.02,"bus_bw":0.03,"nwrong":0.0}})";
  };
  const std::string json = log("types.json", R"({"version":3,"results":[)" + entry("1024", "float", "sum") +
                                                 "," + entry("1024", "bfloat16", "sum") + "]}");
  REQUIRE_THROWS_WITH(ultrasim::read_measured_log(json),
                      json +
                          ":results[1]: a row of bfloat16 sum after rows of float sum: the log's rows name "
                          "types float, bfloat16 and ops sum" +
                          kMixed);
  // A size over 2^53, as everywhere else a size is read (2^53 itself is one).
  const std::string huge = log("huge.log", kHeader + row("9007199254740992", "float", "sum", "20") +
                                               row("9007199254740993", "float", "sum", "21"));
  REQUIRE_THROWS_WITH(ultrasim::read_measured_log(huge),
                      huge + ":3: invalid size '9007199254740993'; out of range: at most 2^53 bytes (8 PiB)");
  const std::string huge_json =
      log("huge.json", R"({"version":3,"results":[)" + entry("9007199254740993", "float", "sum") + "]}");
  REQUIRE_THROWS_WITH(
      ultrasim::read_measured_log(huge_json),
      huge_json + ":results[0]: invalid size '9007199254740993'; out of range: at most 2^53 bytes (8 PiB)");
  // A word that would not keep the message one line is shown as a JSON string.
  const std::string odd = log("odd.json", R"({"version":3,"results":[)" + entry("1024", "float", "sum") +
                                              "," + entry("1024", R"(flo\nat)", "sum") + "]}");
  expect_input_error({"calibrate", "--topology", "switch:8", "--from", odd},
                     odd + R"(:results[1]: a row of "flo\nat" sum after rows of float sum)");
}
