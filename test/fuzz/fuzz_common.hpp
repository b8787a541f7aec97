// Shared by the libFuzzer targets (scripts/fuzz). Each target feeds its input to one of the project's
// parsers. A parser may reject the input only with the exceptions its header documents (InputError;
// SimulationError where a run is involved): the target swallows those, and anything else that leaves it
// (std::out_of_range, nlohmann's type_error, bad_alloc of a huge size, a crash, an ASan or UBSan report,
// a hang past -timeout) is a finding.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "topology/base/errors.hpp"

namespace ultrasim::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A property the parsed value must have: a finding (abort) if it does not.
inline void check(bool holds) {
  if (!holds) std::abort();
}

// Runs `parse`, letting only the documented rejections through.
template <typename F>
void accepts_or_rejects(F&& parse) {
  try {
    parse();
  } catch (const InputError&) {
  }
}

// The file parsers take a path: the input is written to one file per fuzzing process, rewritten for
// every input.
inline std::string write_input(const std::string& text, const std::string& suffix) {
  const std::string path =
      (std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : std::string("/tmp")) + "/ultrasim-fuzz-" +
      std::to_string(::getpid()) + suffix;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

// The lines of `text` (without their '\n').
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::string::size_type start = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The size guard of the targets that build topologies: whether every run of digits in `text` is at most
// 64 and their product at most 4096 (a run longer than 6 digits counts as huge). The generators accept
// up to about a million chips (fattree:160), which builds correctly but slowly; the fuzzer explores the
// parsers, not the machine's memory.
inline bool small_numbers(const std::string& text) {
  double product = 1;
  for (std::size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    const double n = j - i > 6 ? 1e9 : std::stod(text.substr(i, j - i));
    if (n > 64) return false;
    product *= std::max(1.0, n);
    i = j;
  }
  // Generators whose chips grow faster than their numbers: fattree:K builds K^3/4 chips (fattree:60,
  // 54,000 chips, took over 10 s to export under ASan) and cluster:K:PRESET K domains of up to 144.
  if (text.find("fattree") != std::string::npos) product = product * product * product / 4;
  if (text.find("cluster") != std::string::npos) product *= 48;
  return product <= 4096;
}

}  // namespace ultrasim::fuzz
