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

// `--jobs N` of the commands that run sweeps (at most 4 per core; empty: one per core) and `--shard K/N`
// (0 <= K < N); InputError otherwise.
int parse_jobs(const std::string& text);
std::pair<int, int> parse_shard(const std::string& text);

// `--stack NAME|FILE` (collectives/stack.hpp), the same as `--set stack=VALUE`: appended to `sets`, so it is
// declared after --set (CLI11 runs the options' callbacks in the order they were declared).
inline void add_stack_option(CLI::App& app, std::vector<std::string>& sets, const std::string& help) {
  app.add_option_function<std::string>(
      "--stack", [&sets](const std::string& value) { sets.push_back("stack=" + value); }, help);
}

}  // namespace ultrasim
