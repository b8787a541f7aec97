// The input layer every reader uses (topology/base/input_files.hpp): any bytes, read as JSON of either
// flavour and scanned as XML, end in a value, nlohmann's parse_error or an InputError (nesting past its
// limit, a key twice in one object); what parses is nested within the limit and has no repeated key.
#include "fuzz_common.hpp"
#include "topology/base/input_files.hpp"

namespace {

int depth_of(const nlohmann::json& j) {
  int deepest = 0;
  if (j.is_structured())
    for (const auto& child : j) deepest = std::max(deepest, depth_of(child));
  return j.is_structured() ? deepest + 1 : 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ultrasim;
  const std::string text = fuzz::text_of(data, size);
  fuzz::accepts_or_rejects([&] {
    try {
      const nlohmann::json j = parse_json_input(text, "fuzz.json");
      ultrasim::fuzz::check(depth_of(j) <= kJsonDepthLimit);
      parse_ordered_json_input(text, "fuzz.json");
    } catch (const nlohmann::json::exception&) {
    }
  });
  fuzz::accepts_or_rejects([&] { check_xml_depth(text, "fuzz.xml"); });
  return 0;
}
