// Traffic-matrix files (`run --traffic-matrix FILE`, workloads/collective/traffic_matrix_file.hpp), JSON or
// CSV as the content says. What is accepted must answer the per-chip sums that prepare() and the report use,
// and every entry is at most 2^53 bytes (JSON integers as CSV text).
#include "collectives/traffic_matrix.hpp"
#include "fuzz_common.hpp"
#include "workloads/collective/traffic_matrix_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ultrasim;
  const std::string path = fuzz::write_input(fuzz::text_of(data, size), ".matrix");
  fuzz::accepts_or_rejects([&] {
    const TrafficMatrix matrix = read_traffic_matrix(path);
    for (int chip = 0; chip < matrix.p(); ++chip) {
      if (matrix.p() <= 64)
        for (int dst = 0; dst < matrix.p(); ++dst) fuzz::check(matrix.bytes(chip, dst) <= (1ull << 53));
      matrix.sent_by(chip);
      matrix.received_by(chip);
      matrix.fabric_load(chip);
    }
    matrix.total();
    matrix.busiest_load();
  });
  return 0;
}
