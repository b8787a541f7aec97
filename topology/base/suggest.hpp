// "Did you mean" for every registry: the closest known name by edit distance, if it is close enough.
#pragma once

#include <string>
#include <vector>

#include "topology/base/errors.hpp"

namespace ultrasim {

// The known name closest to `name` (Levenshtein distance at most max(2, |name|/3)), or "" if none is.
std::string closest_name(const std::string& name, const std::vector<std::string>& known);

// "unknown <kind> 'rign'; did you mean 'ring'? known: a, b, c" — the message every lookup throws.
std::string unknown_name_message(const std::string& kind, const std::string& name,
                                 const std::vector<std::string>& known);

// Returns if `value` is one of `known`; throws InputError with unknown_name_message otherwise.
void check_choice(const std::string& kind, const std::string& value, const std::vector<std::string>& known);

// The entry of `table` whose `name` member equals `name`; throws InputError with unknown_name_message.
template <class Entry>
const Entry& find_by_name(const std::vector<Entry>& table, const std::string& name, const std::string& kind) {
  std::vector<std::string> known;
  for (const auto& entry : table) {
    if (entry.name == name) return entry;
    known.push_back(entry.name);
  }
  throw InputError(unknown_name_message(kind, name, known));
}

}  // namespace ultrasim
