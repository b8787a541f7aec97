#include "topology/base/params.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "topology/base/errors.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {

ParamSet::ParamSet(std::vector<ParamSpec> specs) {
  declare(specs);
}

void ParamSet::declare(const std::vector<ParamSpec>& specs) {
  for (const auto& spec : specs) {
    if (values_.count(spec.name)) throw InputError("parameter '" + spec.name + "' is declared twice");
    values_[spec.name] = parse(spec, spec.default_value);
    specs_.push_back(spec);
  }
}

// A kChoice value: one of the declared words, a positive integer where "N" is among them (its number), a
// path ending in ".json" where "FILE.json" is, or any word where "NAME" is (the parameter's owner checks it).
static double parse_choice(const ParamSpec& spec, const std::string& text) {
  for (const auto& word : spec.choices)
    if (word == text) return 0;
  auto admits = [&](const char* placeholder) {
    return std::find(spec.choices.begin(), spec.choices.end(), placeholder) != spec.choices.end();
  };
  if (admits("N") && !text.empty() && std::isdigit(static_cast<unsigned char>(text.front())))
    return static_cast<double>(parse_count(text));
  if (admits("FILE.json") && text.size() > 5 && text.ends_with(".json")) return 0;
  if (admits("NAME") && !text.empty() && text.find_first_of(" \t\n=,") == std::string::npos) return 0;
  throw InputError(unknown_name_message("value", text, spec.choices));
}

std::optional<Range> range_of(const ParamSpec& spec) {
  if (spec.range) return spec.range;
  switch (spec.unit) {
    case Unit::kBytes:
      return Range{0, kMaxBytes};
    case Unit::kRate:
    case Unit::kOptRate:
      return Range{kMinRate, kMaxRate};
    case Unit::kTime:
      return Range{0, kMaxTime};
    case Unit::kRatio:
      if (spec.name.ends_with("_efficiency")) return kFraction;
      return Range{0, 1e18};
    case Unit::kCount:
      return Range{1, static_cast<double>(kMaxCount)};
    case Unit::kBool:
    case Unit::kChoice:
      break;
  }
  return std::nullopt;
}

std::string range_text(const ParamSpec& spec) {
  const auto range = range_of(spec);
  if (!range) return {};
  const char* unit = spec.unit == Unit::kBytes                                 ? " bytes"
                     : spec.unit == Unit::kRate || spec.unit == Unit::kOptRate ? " B/s"
                     : spec.unit == Unit::kTime                                ? " s"
                                                                               : "";
  return (range->min_open ? "(" : "[") + shortest_number(range->min) + ", " + shortest_number(range->max) +
         "]" + unit;
}

// Throws InputError when `value` is outside the spec's range.
static void check_range(const ParamSpec& spec, const std::string& text, double value) {
  const auto range = range_of(spec);
  if (!range || (spec.unit == Unit::kOptRate && std::isinf(value))) return;
  if (value < range->min || (range->min_open && value == range->min) || value > range->max)
    throw InputError("'" + text + "' is out of range; expected " + range_text(spec));
}

// The text in the spec's unit, unchecked against its range.
static double number_in_unit(const ParamSpec& spec, const std::string& text) {
  switch (spec.unit) {
    case Unit::kBytes:
      return static_cast<double>(parse_bytes(text));
    case Unit::kRate:
      return parse_rate(text);
    case Unit::kTime:
      return parse_time(text);
    case Unit::kRatio:
      return parse_ratio(text);
    case Unit::kCount:
      return static_cast<double>(parse_count(text));
    case Unit::kBool:
      return parse_bool(text) ? 1.0 : 0.0;
    case Unit::kOptRate:
      if (text == "inf") return std::numeric_limits<double>::infinity();
      return parse_rate(text);
    case Unit::kChoice:
      return parse_choice(spec, text);
  }
  return 0;
}

ParamSet::Value ParamSet::parse(const ParamSpec& spec, const std::string& text) {
  try {
    Value value{text, number_in_unit(spec, text)};
    check_range(spec, text, value.number);
    return value;
  } catch (const InputError& e) {
    throw InputError("parameter " + spec.name + ": " + e.what());
  }
}

void ParamSet::apply(const std::vector<std::pair<std::string, std::string>>& overrides) {
  auto unknown = apply_known(overrides);
  if (!unknown.empty()) throw InputError(unknown_name_message("parameter", unknown.front().first, names()));
}

std::vector<std::pair<std::string, std::string>> ParamSet::apply_known(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::pair<std::string, std::string>> unknown;
  for (const auto& [name, text] : overrides) {
    bool found = false;
    for (const auto& spec : specs_) {
      if (spec.name == name) values_[name] = parse(spec, text), found = true;
    }
    if (!found) unknown.emplace_back(name, text);
  }
  return unknown;
}

const ParamSet::Value& ParamSet::at(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::logic_error("parameter '" + name + "' was never declared");
  return it->second;
}

double ParamSet::number(const std::string& name) const {
  return at(name).number;
}
bool ParamSet::flag(const std::string& name) const {
  return at(name).number != 0.0;
}
const std::string& ParamSet::text(const std::string& name) const {
  return at(name).text;
}

std::optional<double> ParamSet::optional_rate(const std::string& name) const {
  double value = at(name).number;
  if (std::isinf(value)) return std::nullopt;
  return value;
}

std::vector<std::string> ParamSet::names() const {
  std::vector<std::string> out;
  for (const auto& spec : specs_) out.push_back(spec.name);
  return out;
}

nlohmann::json ParamSet::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& spec : specs_) {
    double value = number(spec.name);
    if (spec.unit == Unit::kBool)
      out[spec.name] = value != 0.0;
    else if (spec.unit == Unit::kChoice)
      out[spec.name] = text(spec.name);
    else if (std::isinf(value))
      out[spec.name] = nullptr;
    else
      out[spec.name] = value;
  }
  return out;
}

std::pair<std::string, std::string> split_assignment(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("invalid --set '" + text + "'; expected name=value, e.g. link_bandwidth=200GBps");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::vector<std::pair<std::string, std::string>> split_assignments(const std::vector<std::string>& texts) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& text : texts) {
    auto assignment = split_assignment(text);
    for (const auto& [name, value] : out)
      if (name == assignment.first)
        throw InputError("--set " + name + " is given twice (" + value + ", then " + assignment.second +
                         "); give it once" +
                         (name == "stack" ? " (--stack NAME is --set stack=NAME)" : std::string()));
    out.push_back(std::move(assignment));
  }
  return out;
}

const char* unit_name(Unit unit) {
  switch (unit) {
    case Unit::kBytes:
      return "bytes";
    case Unit::kRate:
      return "bytes/s";
    case Unit::kTime:
      return "s";
    case Unit::kRatio:
      return "ratio";
    case Unit::kCount:
      return "count";
    case Unit::kBool:
      return "bool";
    case Unit::kOptRate:
      return "bytes/s or inf";
    case Unit::kChoice:
      return "word";
  }
  return "";
}

}  // namespace ultrasim
