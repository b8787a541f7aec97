#include "topology/base/options.hpp"

#include <charconv>
#include <cmath>

#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {
namespace {

// The value as the user wrote it: a flag's text quoted, a JSON value as JSON.
std::string shown(const nlohmann::json& v) {
  return v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump();
}

// A whole number written in decimal, all of `text`.
std::optional<std::int64_t> whole(const std::string& text) {
  std::int64_t out = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return out;
}

}  // namespace

std::int64_t option_integer(const nlohmann::json& v, const std::string& where, std::int64_t lo,
                            std::int64_t hi) {
  std::optional<std::int64_t> n;
  if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX))
    n = v.get<std::int64_t>();
  else if (v.is_string())
    n = whole(v.get<std::string>());
  if (!n || *n < lo || *n > hi)
    throw InputError(where + " must be an integer between " + std::to_string(lo) + " and " +
                     std::to_string(hi) + ", not " + shown(v));
  return *n;
}

double option_number(const nlohmann::json& v, const std::string& where, double lo, double hi) {
  std::optional<double> x;
  if (v.is_number()) {
    x = v.get<double>();
  } else if (v.is_string()) {
    try {
      x = parse_ratio(v.get<std::string>());
    } catch (const InputError&) {
    }
  }
  if (!x || !(*x >= lo && *x <= hi))
    throw InputError(where + " must be a number between " + shortest_number(lo) + " and " +
                     shortest_number(hi) + ", not " + shown(v));
  return *x;
}

double option_time(const nlohmann::json& v, const std::string& where) {
  if (v.is_number() && v.get<double>() >= 0 && v.get<double>() <= kMaxTime) return v.get<double>();
  if (v.is_string()) return with_context(where, [&] { return parse_time(v.get<std::string>()); });
  throw InputError(where + " must be a time (\"50ms\", or seconds up to 1e6), not " + shown(v));
}

std::uint64_t option_seed(const nlohmann::json& v, const std::string& where) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_string()) {
    const std::string& t = v.get_ref<const std::string&>();
    if (!t.empty() && t.size() <= 19 && t.find_first_not_of("0123456789") == std::string::npos)
      return std::stoull(t);
  }
  throw InputError(where + " must be a whole number from 0 to 9999999999999999999, not " + shown(v));
}

std::string option_text(const nlohmann::json& v, const std::string& where) {
  if (!v.is_string()) throw InputError(where + " must be a string, not " + shown(v));
  return v.get<std::string>();
}

std::string option_choice(const nlohmann::json& v, const std::string& where,
                          const std::vector<std::string>& choices) {
  std::string text = option_text(v, where);
  with_context(where, [&] { check_choice("value", text, choices); });
  return text;
}

bool option_bool(const nlohmann::json& v, const std::string& where) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string()) return with_context(where, [&] { return parse_bool(v.get<std::string>()); });
  throw InputError(where + " must be true or false, not " + shown(v));
}

std::vector<nlohmann::json> option_items(const nlohmann::json& v) {
  if (!v.is_array()) return {v};
  return {v.begin(), v.end()};
}

void check_fields_known(const nlohmann::json& w, const std::vector<std::string>& names,
                        const std::string& where) {
  if (!w.is_object()) throw InputError(where + ": expected a JSON object");
  for (const auto& [key, value] : w.items())
    if (std::find(names.begin(), names.end(), key) == names.end())
      throw InputError(where + ": " + unknown_name_message("field", key, names));
}

std::string flag_of(const std::string& name) {
  std::string flag = "--" + name;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

}  // namespace ultrasim
