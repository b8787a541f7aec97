// The suite's own rule: ctest lists each test case by its name (catch_discover_tests), and CMake splits a
// name at ';' into two tests that both fail to run. So no test case's name holds a ';' (file and line named).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

TEST_CASE("no test case's name holds a semicolon, which ctest would split into two tests") {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(ULTRASIM_SOURCE_DIR) / "test";
  // TEST_CASE( then one or more adjacent string literals: the name.
  const std::regex test_case(R"re(TEST_CASE\(((\s*"([^"\\]|\\.)*")+))re");
  std::vector<std::string> found;
  int cases = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cpp") continue;
    std::ifstream in(entry.path());
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    for (auto it = std::sregex_iterator(text.begin(), text.end(), test_case); it != std::sregex_iterator();
         ++it) {
      ++cases;
      if ((*it)[1].str().find(';') == std::string::npos) continue;
      const auto line = 1 + std::count(text.begin(), text.begin() + it->position(), '\n');
      found.push_back(fs::relative(entry.path(), ULTRASIM_SOURCE_DIR).generic_string() + ":" +
                      std::to_string(line));
    }
  }
  CHECK(cases > 300);  // the walk saw the suite
  for (const std::string& f : found) UNSCOPED_INFO(f << ": a ';' in the test case's name");
  CHECK(found.empty());
}
