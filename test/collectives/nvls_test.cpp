// NVLS over every plane: each chip's buffer is cut over its switch planes; each switch adds its slice of
// every buffer and multicasts the sum.
#include <catch2/catch.hpp>

#include "topology/base/errors.hpp"
#include "topology/registry.hpp"

using namespace ultrasim;

// On the recording fake (one switch), switch_reduce_test.cpp runs it beside switch-reduce.
TEST_CASE("nvls cuts the buffer over the planes by lanes: hgx-h100's 5/4/4/5, nvl72's 18 x 1") {
  auto slots_of = [](const std::string& spec) {
    const AlgorithmEntry& entry = find_algorithm("allreduce", "nvls");
    auto algorithm = entry.make_with_defaults();
    algorithm->place(make_topology(spec, {}, {}));
    return algorithm->chunks(8);
  };
  CHECK(slots_of("hgx-h100") == 18 * 16);
  CHECK(slots_of("nvl72") == 18 * 16);
  auto refusal = [](const std::string& spec, std::vector<std::pair<std::string, std::string>> sets) {
    auto algorithm = find_algorithm("allreduce", "nvls").make_with_defaults();
    try {
      algorithm->place(make_topology(spec, {}, sets));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("placed");
  };
  CHECK(refusal("trn3", {}) ==
        "nvls needs reduction-capable switches; topology trn3 has switch_reduction=false (set "
        "switch_reduction=true for a what-if)");
  CHECK(refusal("trn3", {{"switch_reduction", "true"}}) ==
        "nvls needs every chip linked alike to the same switch planes (one NVLink domain, as nvl72 or "
        "hgx-h100); chip 4 of trn3 is not: use switch-reduce");
  CHECK(refusal("trn2", {}) ==
        "nvls needs reduction-capable switches; topology trn2 has none (no switch_reduction parameter)");
}
