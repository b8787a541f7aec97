#include "topology/base/suggest.hpp"

#include <algorithm>
#include <numeric>

namespace ultrasim {
namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string closest_name(const std::string& name, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const auto& candidate : known) {
    std::size_t d = edit_distance(name, candidate);
    if (d < best_distance) best = candidate, best_distance = d;
  }
  return best;
}

std::string unknown_name_message(const std::string& kind, const std::string& name,
                                 const std::vector<std::string>& known) {
  std::string message = "unknown " + kind + " '" + name + "'";
  if (auto guess = closest_name(name, known); !guess.empty())
    message += "; did you mean '" + guess + "'? known: ";
  else
    message += "; known: ";
  for (std::size_t i = 0; i < known.size(); ++i) message += (i ? ", " : "") + known[i];
  return message;
}

void check_choice(const std::string& kind, const std::string& value, const std::vector<std::string>& known) {
  for (const auto& k : known)
    if (k == value) return;
  throw InputError(unknown_name_message(kind, value, known));
}

}  // namespace ultrasim
