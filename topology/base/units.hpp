// Parsing and printing of quantities with units, in SimGrid's spelling.
//   sizes: 64MiB, 1GB, 512KiB, 4096 (plain number = bytes); decimal k/M/G/T and binary Ki/Mi/Gi/Ti.
//   rates: 100GBps, 25GiBps, 400Gbps (bits), 1e11 (plain number = bytes per second).
//   times: 1.5us, 500ns, 2ms, 1s, 3e-6 (plain number = seconds).
// Every parser throws InputError naming the text and the accepted forms; none accepts negative values,
// NaN or trailing garbage, nor a value outside its unit's limits (kMaxBytes, kMinRate..kMaxRate,
// kMaxTime): beyond them a byte counter stops being exact or a time stops being a number one can print.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ultrasim {

// The limits every quantity of a unit stays within.
inline constexpr double kMaxBytes = 9007199254740992.0;  // 2^53 (8 PiB): every byte count below is exact
inline constexpr double kMinRate = 1e3;                  // 1 kB/s
inline constexpr double kMaxRate = 1e18;                 // 1 EB/s
inline constexpr double kMaxTime = 1e6;                  // 11.6 days of simulated time
inline constexpr long kMaxCount = 999999999;             // nine digits

// Throws InputError when a simulated time (`what`, e.g. "the step time") is not finite or is over kMaxTime:
// every input was in range, but together they are out of proportion (1 kB/s links under a 1 TiB buffer, a
// FLOP count at a slow chip_flops), and a time past 1e6 s prints as inf or as 20 digits of noise.
void check_simulated_time(double seconds, const std::string& what);

// `bytes` when it is at most 2^53 (kMaxBytes), else InputError "invalid size 'N'; out of range: ..." as
// parse_bytes says it: for byte counts read as integers (a JSON number, a log's column).
std::uint64_t checked_bytes(std::uint64_t bytes);

// A byte count; must be a whole, non-negative number of bytes ("1.5KiB" = 1536 is fine, "1.3B" is not).
std::uint64_t parse_bytes(std::string_view text);
// A bandwidth in bytes per second; must be positive (a zero-bandwidth link is not a link).
double parse_rate(std::string_view text);
// A duration in seconds; must be non-negative.
double parse_time(std::string_view text);
// A plain non-negative real number ("0.9375", "60/64" is accepted as a fraction).
double parse_ratio(std::string_view text);
// A positive integer.
long parse_count(std::string_view text);
// A seed: a whole number from 0 to 9999999999999999999 (--seed, --seeds).
std::uint64_t parse_seed(const std::string& text);
// true/false/on/off/1/0/yes/no.
bool parse_bool(std::string_view text);

// The shortest text that reads back as the same double ("5e-07", not "5.0000000000000008e-07").
std::string shortest_number(double value);

// `value` with `decimals` digits after the point ("12.74").
std::string fixed_text(double value, int decimals);
// A text field as RFC 4180 wants it: quoted (quotes doubled) only if it holds a comma, quote or line
// break, as a schedule's path (`file:PATH` in an algorithm's name) may.
std::string csv_text(const std::string& text);

// The items of `text` between `separator`s; InputError for an empty one ("a,,c", "a,") unless
// `keep_empty` (then "a,,c" is a, "", c).
// A series of whole numbers, each read by `one` (a size, a count): "FROM:TO:xFACTOR" (geometric, FROM > 0,
// FACTOR >= 2), "FROM:TO:+STEP" (arithmetic, STEP read by `one` too) or "A,B,C" (a list); at most `limit`,
// counted before any is made. Errors name `option` ("--sizes") and `noun` ("sizes"):
// "invalid --sizes 'x'; expected FROM:TO:xFACTOR, FROM:TO:+STEP or a list", "... has more than N sizes".
std::vector<std::uint64_t> parse_series(const std::string& text, const std::string& option,
                                        const std::string& noun,
                                        const std::function<std::uint64_t(const std::string&)>& one,
                                        std::size_t limit);
std::vector<std::string> split_items(const std::string& text, char separator, bool keep_empty = false);

// Ranks and inclusive ranges, "0-7,72", each below `chips`, sorted; a chip listed twice ("0,0", "0-3,2")
// is an InputError, as is one not on the topology; `what` names the option in errors.
std::vector<int> parse_chip_list(const std::string& text, int chips, const std::string& what);

// A rate for summaries: "256 GB/s" (1e9 bytes per second, as nccl-tests prints GB/s).
std::string format_rate(double bytes_per_second);

}  // namespace ultrasim
