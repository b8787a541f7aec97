// splitmix64 (Steele, Lea & Flood 2014): a fixed, well-mixed 64-bit function of its input. The one place
// ultrasim hashes: hashed paths (routing), contribution keys (the verifier), and the MoE router's
// random draws (a generator state advanced by the golden-ratio step, each output splitmix64 of it).
#pragma once

#include <cstdint>

namespace ultrasim {

constexpr std::uint64_t kSplitmixStep = 0x9e3779b97f4a7c15ULL;

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  std::uint64_t z = x + kSplitmixStep;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Two 32-bit values as one input: a << 32 | b.
constexpr std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::uint64_t>(a) << 32 | b;
}

}  // namespace ultrasim
