// Named parameters: every number that shapes a run (a preset's link rates, a model knob) is declared once
// with its default, unit, meaning and source, and may be overridden with `--set name=value`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ultrasim {

enum class Unit {
  kBytes,    // a byte count, "64MiB"
  kRate,     // bytes per second, "100GBps"
  kTime,     // seconds, "500ns"
  kRatio,    // a plain real, "0.9375" or "60/64"
  kCount,    // a positive integer
  kBool,     // true/false
  kOptRate,  // a rate, or "inf" (unset: the cost it models is free)
  kChoice,   // one of ParamSpec::choices ("N" among them admits any positive integer, "FILE.json" a path
             // ending in .json, "NAME" any word its owner checks)
};

// The values a numeric parameter accepts, in its base unit: [min, max], or (min, max] when min_open.
struct Range {
  double min = 0, max = 0;
  bool min_open = false;
};
inline constexpr Range kFraction{0, 1, true};  // an efficiency: (0, 1]

struct ParamSpec {
  std::string name;           // unique across topology, model and algorithm parameters
  std::string default_value;  // as a user would type it
  Unit unit;
  std::string meaning;  // one line
  std::string source;   // where the default comes from ("hardware.md: AWS trn3-arch", "assumption")
  std::vector<std::string> choices = {};  // kChoice: the words accepted
  std::optional<Range> range = {};        // numeric units: narrower than the unit's (range_of)
};

// The range a parameter's value must fall in: its own, else (0, 1] for a ratio named *_efficiency, else
// its unit's limits (topology/base/units.hpp: bytes [0, 2^53], rates [1e3, 1e18] B/s, times [0, 1e6] s,
// ratios [0, 1e18], counts [1, 999999999]); none for booleans and choices.
std::optional<Range> range_of(const ParamSpec& spec);
// The range as `list` shows it and errors say it: "(0, 1]", "[1, 4096]", "[1000, 1e+18] B/s".
std::string range_text(const ParamSpec& spec);

// The parameters in effect for one run: the declared specs with their values (defaults unless set).
class ParamSet {
 public:
  ParamSet() = default;
  explicit ParamSet(std::vector<ParamSpec> specs);

  // Adds more declared parameters (e.g. the model's after the topology's). Throws InputError on a
  // duplicate name.
  void declare(const std::vector<ParamSpec>& specs);

  // Applies "name=value" overrides. Throws InputError on an unknown name (with "did you mean") or a
  // value that does not parse in the parameter's unit.
  void apply(const std::vector<std::pair<std::string, std::string>>& overrides);
  // Applies only the overrides whose names are declared here; returns the ones that are not.
  std::vector<std::pair<std::string, std::string>> apply_known(
      const std::vector<std::pair<std::string, std::string>>& overrides);

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  double number(const std::string& name) const;  // bytes, B/s, s, ratio or count
  bool flag(const std::string& name) const;
  // Rate parameters that may be "inf": nullopt when unset (infinite).
  std::optional<double> optional_rate(const std::string& name) const;
  const std::vector<ParamSpec>& specs() const { return specs_; }
  std::vector<std::string> names() const;
  const std::string& text(const std::string& name) const;

  // {"name": value in base units (null for an unset optional rate)}, sorted by name.
  nlohmann::json to_json() const;

 private:
  struct Value {
    std::string text;
    double number = 0;
  };
  const Value& at(const std::string& name) const;
  // The value in the spec's unit, checked against range_of(spec); errors name the parameter.
  static Value parse(const ParamSpec& spec, const std::string& text);

  std::vector<ParamSpec> specs_;
  std::map<std::string, Value> values_;
};

// Splits "name=value" (the --set syntax); throws InputError when there is no '='.
std::pair<std::string, std::string> split_assignment(const std::string& text);
// Every "name=value" of a repeated --set, in order; InputError when a name is given twice (which value
// was meant is not for the program to guess).
std::vector<std::pair<std::string, std::string>> split_assignments(const std::vector<std::string>& texts);

const char* unit_name(Unit unit);

}  // namespace ultrasim
