// What every workload file reader (workloads/moe.hpp, workloads/training.hpp) checks the same way.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "topology/base/errors.hpp"

namespace ultrasim {

// Reads the fields of a workload file's JSON object `w`; errors name the file (`where`).
struct FieldReader {
  const nlohmann::json& w;
  const std::string& where;

  // The value of `key`, or null if the file has none.
  const nlohmann::json* field(const char* key) const { return w.contains(key) ? &w.at(key) : nullptr; }
  // InputError when the file has both `a` and `b`, two ways of saying one thing (`why`: which wins is
  // not for the program to guess).
  void exclusive(const char* a, const char* b, const std::string& why) const {
    if (w.contains(a) && w.contains(b))
      throw InputError(where + ": fields '" + a + "' and '" + b + "' are exclusive: " + why);
  }
  // Into `out`: the positive integer `key` (at most half `Int`'s maximum), if present or `required`.
  template <class Int>
  void integer(const char* key, Int& out, bool required) const {
    const auto* v = field(key);
    if (v == nullptr) {
      if (required) throw InputError(where + ": missing field '" + key + "' (a positive integer)");
      return;
    }
    if (!v->is_number_integer() || v->get<std::int64_t>() < 1 ||
        v->get<std::int64_t>() > static_cast<std::int64_t>(std::numeric_limits<Int>::max() / 2))
      throw InputError(where + ": field '" + key + "' must be a positive integer");
    out = static_cast<Int>(v->get<std::uint64_t>());
  }
  // Into `out`: the string `key`, if present.
  void text(const char* key, std::string& out) const {
    if (const auto* v = field(key)) {
      if (!v->is_string()) throw InputError(where + ": field '" + std::string(key) + "' must be a string");
      out = v->get<std::string>();
    }
  }
  // Into `out`: the size `key` in bytes, a whole number or a string with units ("64MiB"), if present or
  // `required`.
  void bytes(const char* key, std::uint64_t& out, bool required) const;
};

// Throws InputError "<where>: expected a JSON object" or "<where>: unknown field 'x'".
void check_known_fields(const nlohmann::json& object, const std::vector<std::string>& known,
                        const std::string& where);
// The "set" object (parameter: value, a string or a number) as --set overrides; none if absent.
std::vector<std::pair<std::string, std::string>> set_overrides(const nlohmann::json& workload,
                                                               const std::string& where);

}  // namespace ultrasim
