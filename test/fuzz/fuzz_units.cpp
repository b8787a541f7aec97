// Units (topology/base/units.hpp): the first byte picks the parser, the rest is the text. What parses must
// also print and read back to the same value (the JSON results and `--set` round-trips depend on it).
#include <cmath>
#include <cstdlib>

#include "fuzz_common.hpp"
#include "topology/base/units.hpp"

using namespace ultrasim;
using ultrasim::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text = fuzz::text_of(data + 1, size - 1);
  fuzz::accepts_or_rejects([&] {
    switch (data[0] % 6) {
      case 0: {
        const std::uint64_t bytes = parse_bytes(text);
        check(parse_bytes(std::to_string(bytes)) == bytes);
        break;
      }
      case 1: {
        const double rate = parse_rate(text);
        check(std::isfinite(rate) && rate > 0 && parse_rate(shortest_number(rate)) == rate);
        format_rate(rate);
        break;
      }
      case 2: {
        const double time = parse_time(text);
        check(std::isfinite(time) && time >= 0 && parse_time(shortest_number(time)) == time);
        fixed_text(time, 2);
        break;
      }
      case 3: {
        const double ratio = parse_ratio(text);
        check(std::isfinite(ratio) && ratio >= 0 && parse_ratio(shortest_number(ratio)) == ratio);
        break;
      }
      case 4: {
        const long count = parse_count(text);
        check(count > 0 && parse_count(std::to_string(count)) == count);
        break;
      }
      default:
        parse_bool(text);
        csv_text(text);
    }
  });
  return 0;
}
