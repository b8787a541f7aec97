#include "topology/base/units.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "topology/base/errors.hpp"

namespace ultrasim {
namespace {

// A unit suffix: value x factor, or value / divisor for sub-units, so that "500ns" reads back as 5e-07
// rather than 500 x 1e-9 = 5.000000000000001e-07.
struct Suffix {
  std::string_view text;
  double factor;
  double divisor = 1.0;
};

// Longest suffixes first so that "GiBps" is not read as "GiB" + "ps".
constexpr std::array kSizeSuffixes{Suffix{"TiB", 1099511627776.0},
                                   Suffix{"GiB", 1073741824.0},
                                   Suffix{"MiB", 1048576.0},
                                   Suffix{"KiB", 1024.0},
                                   Suffix{"kiB", 1024.0},
                                   Suffix{"TB", 1e12},
                                   Suffix{"GB", 1e9},
                                   Suffix{"MB", 1e6},
                                   Suffix{"kB", 1e3},
                                   Suffix{"KB", 1e3},
                                   Suffix{"B", 1.0}};
constexpr std::array kRateSuffixes{Suffix{"TiBps", 1099511627776.0},
                                   Suffix{"GiBps", 1073741824.0},
                                   Suffix{"MiBps", 1048576.0},
                                   Suffix{"KiBps", 1024.0},
                                   Suffix{"TBps", 1e12},
                                   Suffix{"GBps", 1e9},
                                   Suffix{"MBps", 1e6},
                                   Suffix{"kBps", 1e3},
                                   Suffix{"KBps", 1e3},
                                   Suffix{"Bps", 1.0},
                                   Suffix{"Tbps", 1e12 / 8},
                                   Suffix{"Gbps", 1e9 / 8},
                                   Suffix{"Mbps", 1e6 / 8},
                                   Suffix{"kbps", 1e3 / 8},
                                   Suffix{"bps", 1.0 / 8}};
constexpr std::array kTimeSuffixes{Suffix{"ms", 1.0, 1e3}, Suffix{"us", 1.0, 1e6}, Suffix{"ns", 1.0, 1e9},
                                   Suffix{"ps", 1.0, 1e12}, Suffix{"s", 1.0}};

// Reads "64MiB" as {64, 64 x 2^20}: the number as written and its value in base units.
template <std::size_t N>
std::pair<double, double> split(std::string_view text, const std::array<Suffix, N>& suffixes,
                                std::string_view what, std::string_view examples) {
  auto fail = [&] {
    return InputError("invalid " + std::string(what) + " '" + std::string(text) + "'; expected " +
                      std::string(examples));
  };
  if (text.empty()) throw fail();
  double factor = 1.0, divisor = 1.0;
  std::string_view number = text;
  for (const auto& s : suffixes) {
    if (text.size() > s.text.size() && text.ends_with(s.text)) {
      number = text.substr(0, text.size() - s.text.size());
      factor = s.factor, divisor = s.divisor;
      break;
    }
  }
  std::string buffer(number);
  if (buffer.empty() || buffer.find_first_not_of("0123456789.eE+-") != std::string::npos) throw fail();
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(buffer.c_str(), &end);
  // ERANGE: "1e400" overflows and "1e-400" underflows; neither is the number the user wrote.
  if (end != buffer.c_str() + buffer.size() || errno == ERANGE || !std::isfinite(value) || value < 0)
    throw fail();
  const double base = value * factor / divisor;
  if (!std::isfinite(base) || (value > 0 && base == 0))  // "1e308TBps" overflows in base units
    throw InputError("invalid " + std::string(what) + " '" + std::string(text) + "'; out of range");
  return {value, base};
}

}  // namespace

std::uint64_t checked_bytes(std::uint64_t bytes) {
  if (bytes > (1ull << 53))
    throw InputError("invalid size '" + std::to_string(bytes) +
                     "'; out of range: at most 2^53 bytes (8 PiB)");
  return bytes;
}

std::uint64_t parse_bytes(std::string_view text) {
  // A plain integer is read exactly (strtod would round 2^53 + 1 down into range).
  if (!text.empty() && text.size() <= 19 && text.find_first_not_of("0123456789") == std::string_view::npos) {
    std::uint64_t exact = 0;
    std::from_chars(text.data(), text.data() + text.size(), exact);
    return checked_bytes(exact);
  }
  double bytes = split(text, kSizeSuffixes, "size", "a byte count such as 4096, 64MiB or 1GB").second;
  if (bytes != std::floor(bytes))
    throw InputError("invalid size '" + std::string(text) + "'; expected a whole number of bytes");
  if (bytes > kMaxBytes)
    throw InputError("invalid size '" + std::string(text) + "'; out of range: at most 2^53 bytes (8 PiB)");
  return static_cast<std::uint64_t>(bytes);
}

double parse_rate(std::string_view text) {
  auto [value, rate] =
      split(text, kRateSuffixes, "bandwidth", "a positive rate such as 100GBps, 25GiBps or 400Gbps");
  if (value <= 0) throw InputError("invalid bandwidth '" + std::string(text) + "'; expected a positive rate");
  if (rate < kMinRate || rate > kMaxRate)
    throw InputError("invalid bandwidth '" + std::string(text) + "'; out of range: 1kBps to 1e18Bps");
  return rate;
}

void check_simulated_time(double seconds, const std::string& what) {
  if (std::isfinite(seconds) && seconds <= kMaxTime) return;
  throw InputError(what + " would be " +
                   (std::isfinite(seconds) ? shortest_number(seconds) + " s" : "infinite") +
                   ", over the limit of 1e6 s of a simulated time; the parameters are out of proportion "
                   "(a bandwidth, chip_flops or size set far from the others)");
}

double parse_time(std::string_view text) {
  const double seconds = split(text, kTimeSuffixes, "time", "a duration such as 500ns, 1.5us or 2ms").second;
  if (seconds > kMaxTime)
    throw InputError("invalid time '" + std::string(text) + "'; out of range: at most 1e6 s (11.6 days)");
  return seconds;
}

double parse_ratio(std::string_view text) {
  std::size_t slash = text.find('/');
  if (slash != std::string_view::npos) {
    std::array<Suffix, 0> none{};
    double num = split(text.substr(0, slash), none, "ratio", "a number such as 0.9375 or 60/64").first;
    double den = split(text.substr(slash + 1), none, "ratio", "a number such as 0.9375 or 60/64").first;
    if (den <= 0) throw InputError("invalid ratio '" + std::string(text) + "'; the denominator must be > 0");
    if (!std::isfinite(num / den))
      throw InputError("invalid ratio '" + std::string(text) + "'; out of range");
    return num / den;
  }
  std::array<Suffix, 0> none{};
  return split(text, none, "ratio", "a number such as 0.9375 or 60/64").first;
}

long parse_count(std::string_view text) {
  std::string buffer(text);
  if (buffer.empty() || buffer.find_first_not_of("0123456789") != std::string::npos || buffer.size() > 9)
    throw InputError("invalid count '" + buffer + "'; expected a positive integer");
  long value = std::strtol(buffer.c_str(), nullptr, 10);
  if (value <= 0) throw InputError("invalid count '" + buffer + "'; expected a positive integer");
  return value;
}

std::uint64_t parse_seed(const std::string& text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    throw InputError("invalid seed '" + text + "'; expected a whole number from 0 to 9999999999999999999");
  return std::stoull(text);
}

bool parse_bool(std::string_view text) {
  if (text == "true" || text == "on" || text == "1" || text == "yes") return true;
  if (text == "false" || text == "off" || text == "0" || text == "no") return false;
  throw InputError("invalid boolean '" + std::string(text) + "'; expected true or false");
}

std::string shortest_number(double value) {
  char out[40];
  auto [end, ec] = std::to_chars(out, out + sizeof out, value);
  return std::string(out, end);
}

std::string fixed_text(double value, int decimals) {
  char out[64];
  std::snprintf(out, sizeof out, "%.*f", decimals, value);
  return out;
}

std::string csv_text(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string format_rate(double bytes_per_second) {
  char out[64];
  std::snprintf(out, sizeof out, "%g GB/s", bytes_per_second / 1e9);
  return out;
}

std::vector<std::uint64_t> parse_series(const std::string& text, const std::string& option,
                                        const std::string& noun,
                                        const std::function<std::uint64_t(const std::string&)>& one,
                                        std::size_t limit) {
  const std::string more = option + " '" + text.substr(0, 40) + (text.size() > 40 ? "...' " : "' ") +
                           "has more than " + std::to_string(limit) + " " + noun;
  std::vector<std::uint64_t> values;
  if (text.find(':') == std::string::npos) {
    for (const auto& item : with_context(option, [&] { return split_items(text, ','); }))
      values.push_back(one(item));
    if (values.empty())
      throw InputError(option + " '" + text + "' lists no " + noun.substr(0, noun.size() - 1) +
                       "; expected a list");
    if (values.size() > limit) throw InputError(more);
    return values;
  }
  const auto parts = split_items(text, ':');
  if (parts.size() != 3 || parts[2].size() < 2 || (parts[2][0] != 'x' && parts[2][0] != '+'))
    throw InputError("invalid " + option + " '" + text +
                     "'; expected FROM:TO:xFACTOR, FROM:TO:+STEP or a list");
  const std::uint64_t from = one(parts[0]), to = one(parts[1]);
  if (from > to) throw InputError("invalid " + option + " '" + text + "': FROM is larger than TO");
  if (parts[2][0] == 'x') {
    const std::uint64_t factor = static_cast<std::uint64_t>(parse_count(parts[2].substr(1)));
    if (factor < 2 || from == 0)
      throw InputError("invalid " + option + " '" + text + "': needs FROM > 0 and a factor >= 2");
    for (std::uint64_t n = from; n <= to; n *= factor) {
      values.push_back(n);
      if (n > to / factor) break;
    }
    if (values.size() > limit) throw InputError(more);
    return values;
  }
  const std::uint64_t step = one(parts[2].substr(1));
  if (step == 0) throw InputError("invalid " + option + " '" + text + "': the step is 0");
  // Counted before any is made: "1:1GiB:+1" would be a billion values, and n + step may wrap.
  if ((to - from) / step >= limit) throw InputError(more);
  for (std::uint64_t n = from;; n += step) {
    values.push_back(n);
    if (to - n < step) break;
  }
  return values;
}

std::vector<std::string> split_items(const std::string& text, char separator, bool keep_empty) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, separator);) out.push_back(item);
  if (keep_empty) return out;
  // "1KiB,,2KiB", ",8" or "8,": an item left out by mistake, not to be skipped in silence.
  if (std::find(out.begin(), out.end(), "") != out.end() || (!text.empty() && text.back() == separator))
    throw InputError("'" + text + "' has an empty item (two '" + std::string(1, separator) +
                     "' in a row, or one at an end)");
  return out;
}

std::vector<int> parse_chip_list(const std::string& text, int chips, const std::string& what) {
  std::vector<int> out;
  auto rank = [&](const std::string& item) {
    const long r = item == "0" ? 0 : parse_count(item);
    if (r >= chips)
      throw InputError(what + ": chip " + item + " is not on this topology (its ranks are 0-" +
                       std::to_string(chips - 1) + ")");
    return static_cast<int>(r);
  };
  for (const std::string& item : split_items(text, ',', true)) {
    const auto dash = item.find('-');
    const int first = rank(item.substr(0, dash));
    const int last = dash == std::string::npos ? first : rank(item.substr(dash + 1));
    if (last < first) throw InputError(what + ": range '" + item + "' runs backwards");
    for (int r = first; r <= last; ++r) out.push_back(r);
  }
  if (out.empty()) throw InputError(what + ": no chip given (expected ranks such as 0-7,72)");
  std::sort(out.begin(), out.end());
  if (const auto twice = std::adjacent_find(out.begin(), out.end()); twice != out.end())
    throw InputError(what + ": chip " + std::to_string(*twice) + " is listed twice in '" + text + "'");
  return out;
}

}  // namespace ultrasim
