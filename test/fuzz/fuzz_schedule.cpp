// Schedule files (`run --algorithm file:PATH`, collectives/schedule.hpp parse_schedule): JSON text parsed
// and validated; what is accepted must make its algorithm entry.
#include <memory>

#include "collectives/schedule.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ultrasim;
  fuzz::accepts_or_rejects([&] {
    auto schedule = std::make_shared<const Schedule>(parse_schedule(fuzz::text_of(data, size), "fuzz.json"));
    schedule_entry(schedule);
    schedule_algorithm(schedule);
  });
  return 0;
}
