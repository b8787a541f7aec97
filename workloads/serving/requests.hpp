// Requests as they arrive at a serving deployment (`ultrasim serve --requests FILE | --rate QPS`): read from
// a trace file or drawn by a seeded generator. Free of SimGrid.
//
// Trace files: CSV with a header row, or JSON Lines (one object per line), one request per row, sorted by
// arrival. The columns are found by name (case and the separators ' ', '_', '-' ignored), with the names
// of the public traces users have:
//   arrival  arrival_time, arrived_at (Vidur), timestamp (Azure LLM inference, BurstGPT), time, arrival_s
//   prompt   prompt_tokens, input_tokens, context_tokens (Azure), num_prefill_tokens (Vidur),
//            request_tokens (BurstGPT), input_len, prompt_len
//   output   output_tokens, generated_tokens (Azure), num_decode_tokens (Vidur), response_tokens
//            (BurstGPT), output_len
// Arrival times are seconds (a number) or a date and time "YYYY-MM-DD HH:MM:SS[.frac]" (Azure's), taken
// relative to the first row. Other columns are ignored. A row with an unsorted or negative time, a token
// count that is not a whole number in [1, 2^24], or a non-number is refused naming the file and row.
//
// The generator: `count` requests at `rate` per second; the gaps between arrivals are gamma distributed
// with shape `burstiness` and mean 1 / rate (burstiness 1: Poisson arrivals; below 1 burstier, above
// smoother: vLLM's serving benchmark's --burstiness); lengths fixed, uniform within +-range of the given
// lengths (vLLM's --random-range-ratio), lognormal with sigma around them (the mean kept), or drawn from
// a file of (input, output) pairs. Same seed, same requests.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ultrasim {

struct ServingRequest {
  double arrival_s = 0;
  std::uint64_t prompt = 1, output = 1;
};

std::vector<ServingRequest> read_request_trace(const std::string& path);

// A named trace shape (`--trace-shape NAME`, `ultrasim list shapes`): lognormal prompt and output lengths
// and gamma-distributed gaps between arrivals, each figure from the published statistics of a public trace
// (workloads/serving/README.md, "Trace shapes"; each entry's source names the trace and how the figure
// was read from it).
struct NamedTraceShape {
  std::string name, description;
  double input_mean, input_sigma;  // tokens; sigma of the lengths' logarithm
  double output_mean, output_sigma;
  double input_max, output_max;  // the longest drawn (the trace's longest, or a context limit)
  double burstiness;             // gamma shape of the gaps: 1 / CV^2
  std::string source;
};
const std::vector<NamedTraceShape>& trace_shapes();
// InputError "unknown trace shape 'x'; did you mean ...".
const NamedTraceShape& trace_shape_named(const std::string& name);

struct RequestGenerator {
  double rate = 0;  // requests per second
  std::uint64_t count = 1000;
  double burstiness = 1;
  std::string shape;  // a named trace shape: its lengths and burstiness instead of the fields below
  std::uint64_t input_len = 1024, output_len = 256;
  std::string length_dist = "fixed";                             // fixed | uniform:R | lognormal:SIGMA
  std::vector<std::pair<std::uint64_t, std::uint64_t>> lengths;  // drawn from, when not empty
  std::uint64_t seed = 0;
  // InputError naming the option: a rate not in (0, 1e9], a count not in [1, 2^24], ...
  void validate() const;
};

std::vector<ServingRequest> generate_requests(const RequestGenerator& generator);

// A request's lengths as a trace row would give them: 1 <= tokens <= 2^24.
inline constexpr std::uint64_t kMaxRequestTokens = 1u << 24;

}  // namespace ultrasim
