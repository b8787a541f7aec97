// The commands of the `ultrasim` program, one file each, one table (commands()). A command declares its
// options on its CLI11 subcommand and returns what runs it once the words are parsed; main() maps what
// it returns and throws to an exit status (0 success, 2 bad input, 3 the simulation failed or did not
// verify, 1 internal error). Adding a command = its file + one row in commands.cpp.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ultrasim {

struct Command {
  std::string name, summary;
  // Declares the options on `app` (the subcommand); returns the command's body, which runs with the
  // whole command line as typed (results record it) and returns the exit status. The body throws
  // InputError for bad words and SimulationError when a simulation cannot complete.
  std::function<std::function<int(const std::string& command_line)>(CLI::App& app)> declare;
};

const std::vector<Command>& commands();

}  // namespace ultrasim
