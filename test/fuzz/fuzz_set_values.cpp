// `--set` parameter values (topology/base/params.hpp): every line is one `name=value`, applied to a parameter
// set that declares one parameter of each unit (the names are the units'). What is accepted must read
// back through the typed accessors and print as JSON.
#include "fuzz_common.hpp"
#include "topology/base/params.hpp"

namespace {

using namespace ultrasim;

const std::vector<ParamSpec>& specs() {
  static const std::vector<ParamSpec> all{
      {"bytes", "1MiB", Unit::kBytes, "", ""},
      {"rate", "100GBps", Unit::kRate, "", ""},
      {"time", "500ns", Unit::kTime, "", ""},
      {"ratio", "1", Unit::kRatio, "", ""},
      {"count", "1", Unit::kCount, "", ""},
      {"bool", "false", Unit::kBool, "", ""},
      {"optrate", "inf", Unit::kOptRate, "", ""},
      {"choice", "auto", Unit::kChoice, "", "", {"auto", "single", "N"}},
  };
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::accepts_or_rejects([&] {
    std::vector<std::pair<std::string, std::string>> overrides;
    for (const auto& line : fuzz::lines_of(fuzz::text_of(data, size)))
      overrides.push_back(split_assignment(line));
    ParamSet params(specs());
    params.apply_known(overrides);
    params.apply(overrides);
    for (const char* name : {"bytes", "rate", "time", "ratio", "count"}) params.number(name);
    params.flag("bool");
    params.optional_rate("optrate");
    params.text("choice");
    params.to_json().dump();
  });
  return 0;
}
