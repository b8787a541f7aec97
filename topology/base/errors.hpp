// Error types shared by every module. Library code throws; only the command line's main() turns an
// error into an exit status (architecture.md: 2 bad input, 3 simulation failed, 1 internal error).
#pragma once

#include <stdexcept>
#include <string>

namespace ultrasim {

// The user asked for something invalid: an unknown name, a malformed value, an impossible topology.
// The message names the bad value and what was expected. Exit status 2.
class InputError : public std::invalid_argument {
 public:
  explicit InputError(const std::string& what) : std::invalid_argument(what) {}
};

// The input was valid but the simulation could not complete or its result failed verification
// (an unreachable chip, a collective that left a chip with a wrong contribution). Exit status 3.
class SimulationError : public std::runtime_error {
 public:
  explicit SimulationError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace ultrasim
