// Error types shared by every module. Library code throws; only the command line's main() turns an
// error into an exit status (architecture.md: 2 bad input, 3 simulation failed, 1 internal error).
#pragma once

#include <stdexcept>
#include <string>

namespace ultrasim {

// `what` with its NUL bytes shown as \x00: an exception's what() is a C string, which a NUL (from a
// file's key or value quoted in a message) would cut short.
inline std::string without_nul(std::string what) {
  for (std::size_t at = what.find('\0'); at != std::string::npos; at = what.find('\0', at + 4))
    what.replace(at, 1, "\\x00");
  return what;
}

// The user asked for something invalid: an unknown name, a malformed value, an impossible topology.
// The message names the bad value and what was expected. Exit status 2.
class InputError : public std::invalid_argument {
 public:
  explicit InputError(const std::string& what) : std::invalid_argument(without_nul(what)) {}
};

// The input was valid but the simulation could not complete or its result failed verification
// (an unreachable chip, a collective that left a chip with a wrong contribution). Exit status 3.
class SimulationError : public std::runtime_error {
 public:
  explicit SimulationError(const std::string& what) : std::runtime_error(without_nul(what)) {}
};

// The user stopped the work (Ctrl-C: SIGINT; or SIGTERM, what Slurm and `kill` send) and what it kept is
// saved: the message says what was kept and how to go on. Exit status 128 + the signal (130, 143), as a
// shell gives a program that signal ended.
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(const std::string& what, int signal = 2)
      : std::runtime_error(without_nul(what)), status_(128 + signal) {}
  int status() const { return status_; }

 private:
  int status_;
};

// f(), with an InputError it throws prefixed by `context` (an option's name): "--hidden: invalid count
// '0'; expected a positive integer".
template <class F>
auto with_context(const std::string& context, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const InputError& e) {
    throw InputError(context + ": " + e.what());
  }
}

}  // namespace ultrasim
