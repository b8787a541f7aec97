// Reading traffic matrices: the formats of workloads/README.md, and one precise error per kind of bad file.
#include <catch2/catch.hpp>
#include <fstream>

#include "cli_runner.hpp"
#include "topology/base/errors.hpp"
#include "workloads/collective/traffic_matrix_file.hpp"

using namespace ultrasim;
using ultrasim::test::temp_path;

namespace {

std::string file_with(const std::string& name, const std::string& text) {
  std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

void check_rows(const TrafficMatrix& m, const std::vector<std::vector<std::uint64_t>>& rows) {
  REQUIRE(m.p() == static_cast<int>(rows.size()));
  for (int s = 0; s < m.p(); ++s)
    for (int d = 0; d < m.p(); ++d) CHECK(m.bytes(s, d) == rows[s][d]);
}

}  // namespace

TEST_CASE("a traffic matrix reads from JSON with a bytes key, a bare JSON array, or CSV with units") {
  const std::vector<std::vector<std::uint64_t>> rows{{0, 1024, 2048}, {65536, 0, 1}, {1000000, 0, 0}};
  check_rows(
      read_traffic_matrix(file_with(
          "m.json", R"({"description": "x", "bytes": [[0, 1024, 2048], [65536, 0, 1], [1e6, 0, 0]]})")),
      rows);
  check_rows(read_traffic_matrix(
                 file_with("bare.json", R"( [[0, "1KiB", "2KiB"], ["64KiB", 0, 1], ["1MB", 0, 0]])")),
             rows);
  check_rows(read_traffic_matrix(file_with("m.csv",
                                           "# row = sender\n"
                                           "0, 1KiB, 2048\r\n"
                                           "\n"
                                           "64KiB,0,1\n"
                                           "1MB , 0 , 0\n")),
             rows);
  check_rows(read_traffic_matrix(file_with("one.csv", "4096\n")), {{4096}});
}

TEST_CASE("a bad traffic matrix file is an InputError naming the file and the place") {
  auto fails = [](const std::string& name, const std::string& text, const std::string& fragment) {
    std::string path = file_with(name, text);
    INFO(name);
    CHECK_THROWS_AS(read_traffic_matrix(path), InputError);
    CHECK_THROWS_WITH(read_traffic_matrix(path),
                      Catch::Contains("'" + path + "'") && Catch::Contains(fragment));
  };
  CHECK_THROWS_WITH(read_traffic_matrix("/nonexistent/m.json"),
                    Catch::Contains("cannot read traffic matrix"));
  CHECK_THROWS_WITH(read_traffic_matrix(temp_path("")), Catch::Contains("is a directory"));
  fails("ragged.json", "[[1, 2], [3]]", "row 1 has 1 entries but row 0 has 2");
  fails("ragged.csv", "1,2,3\n4,5\n6,7,8\n", "line 2 has 2 entries but line 1 has 3");
  fails("wide.csv", "1,2,3\n4,5,6\n", "2 rows of 3 entries; expected a square");
  fails("negative.json", "[[0, -5], [0, 0]]", "row 0, column 1: -5 is negative");
  fails("negative.csv", "0,1\n-5,0\n", "line 2, field 1: '-5' is negative");
  fails("fraction.json", "[[0, 1.5], [0, 0]]", "1.5 is not a whole number of bytes");
  fails("fraction.csv", "0,1.5\n0,0\n", "line 1, field 2: invalid size '1.5'");
  fails("word.csv", "0,1\nabc,0\n", "line 2, field 1: invalid size 'abc'");
  fails("semicolons.csv", "0;1\n1;0\n", "line 1, field 1: invalid size '0;1'");
  fails("trailing.csv", "0,1,\n1,0,\n", "line 1 ends with an empty field");
  fails("empty.csv", "# nothing\n\n", "no rows");
  fails("broken.json", "[[0, 1], [1, 0]", "invalid JSON");
  fails("nokey.json", R"({"byte": [[0]]})", "no \"bytes\" key");
  fails("flat.json", "[0, 1, 2]", "row 0 is not an array");
  fails("bool.json", "[[true]]", "got true");
  fails("unit.json", R"([["64XB"]])", "invalid size '64XB'");
}
