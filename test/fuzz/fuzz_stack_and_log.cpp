// Stack files (`--stack FILE.json`, collectives/stack.hpp) and measured logs (`calibrate --from LOG`:
// nccl-tests output, text or -J JSON, or nccom-test output, workloads/experiments/calibrate.hpp). An input
// whose first line is "log" is a log (the rest of it); any other is a stack file. What a stack file accepts
// must write back (Stack::file_text) into a stack file that reads as the same stack; what a log accepts has
// points of positive, finite times and sizes of at most 2^53 bytes.
#include <cmath>

#include "collectives/stack.hpp"
#include "fuzz_common.hpp"
#include "workloads/experiments/calibrate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ultrasim;
  const std::string text = fuzz::text_of(data, size);
  if (text.rfind("log\n", 0) == 0) {
    const std::string path = fuzz::write_input(text.substr(4), ".log");
    fuzz::accepts_or_rejects([&] {
      for (const MeasuredPoint& p : read_measured_log(path))
        fuzz::check(p.time_s > 0 && std::isfinite(p.time_s) && p.bytes <= (1ull << 53));
    });
    return 0;
  }
  fuzz::accepts_or_rejects([&] {
    const Stack stack = parse_stack(text, "stack file", "fuzz");
    const Stack again = parse_stack(stack.file_text(), "written stack", "fuzz");
    fuzz::check(again.to_json() == stack.to_json());
    for (const Protocol& p : stack.protocols) p.launch_for("nvls");
  });
  return 0;
}
