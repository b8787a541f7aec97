// ultrasim: the command-line program. Parses the user's words, runs one command (sim/commands/, one
// file each), and maps errors to exit statuses: 0 success, 2 bad input, 3 simulation failed or did not
// verify, 1 internal error. A failed write (an output file or the standard output on a full disk) is
// exit status 2, as any output that cannot be written where the user asked (topology/base/output_file.hpp).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>

#include <CLI/CLI.hpp>

#include "sim/analysis/report.hpp"
#include "sim/commands/command.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/log.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/suggest.hpp"

namespace {

using namespace ultrasim;

// An error message as one printable line: control characters and bytes that are not UTF-8 (a file's
// junk, a path in another encoding) are escaped as \xNN, and a message quoting a huge value is cut.
std::string one_line(const std::string& text) {
  constexpr std::size_t kMaxBytes = 2000;
  std::string out;
  for (std::size_t i = 0; i < text.size() && out.size() < kMaxBytes;) {
    const auto byte = static_cast<unsigned char>(text[i]);
    // The length of the well-formed UTF-8 sequence starting here (1 for ASCII), or 0.
    std::size_t length = byte < 0x80           ? 1
                         : (byte >> 5) == 0x6  ? 2
                         : (byte >> 4) == 0xe  ? 3
                         : (byte >> 3) == 0x1e ? 4
                                               : 0;
    if (i + length > text.size()) length = 0;
    for (std::size_t k = 1; k < length; ++k)
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) length = 0;
    if (length == 0 || byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
      ++i;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  if (out.size() >= kMaxBytes) out += "...";
  return out;
}

int fail(int status, const std::string& message) {
  std::cerr << "ultrasim: error: " << one_line(message) << "\n";
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  std::string command_line = "ultrasim";
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];

  CLI::App app{"ultrasim: a discrete-event simulator of AI scale-up fabrics and their collectives"};
  app.set_version_flag("--version", ultrasim_version());
  app.require_subcommand(1);
  std::string log_level;
  app.fallthrough();  // --log-level after the command's own options too
  app.add_option("--log-level", log_level,
                 log_level_choices() +
                     ": what ultrasim logs on the standard error (default warn, or the "
                     "environment variable ULTRASIM_LOG_LEVEL)");
  std::vector<std::string> names;
  std::vector<std::pair<CLI::App*, std::function<int(const std::string&)>>> bodies;
  for (const Command& command : commands()) {
    CLI::App* sub = app.add_subcommand(command.name, command.summary);
    bodies.emplace_back(sub, command.declare(*sub));
    names.push_back(command.name);
  }

  if (argc > 1 && argv[1][0] != '-' && std::find(names.begin(), names.end(), argv[1]) == names.end())
    return fail(2, unknown_name_message("command", argv[1], names));
  // A result that did not reach the standard output (a full disk, > /dev/full) is a failure too; a failed
  // command has said why already.
  auto checked = [](int status) {
    const std::string lost = standard_output_error();
    return status == 0 && !lost.empty() ? fail(2, lost) : status;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return checked(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return checked(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return checked(app.exit(e));
  } catch (const CLI::ParseError& e) {
    if (!app.get_subcommands().empty()) return fail(2, e.what());
    std::string list;
    for (std::size_t i = 0; i < names.size(); ++i)
      list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return fail(2, std::string(e.what()) + "; expected a command: " + list);
  }

  try {
    if (!log_level.empty())
      set_log_level(log_level, "--log-level");
    else if (const char* word = std::getenv("ULTRASIM_LOG_LEVEL"); word != nullptr && *word != 0)
      set_log_level(word, "ULTRASIM_LOG_LEVEL");
    logger().debug("{}", command_line);
    for (const auto& [sub, body] : bodies)
      if (*sub) return checked(body(command_line));
  } catch (const InputError& e) {
    return fail(2, e.what());
  } catch (const SimulationError& e) {
    return fail(3, e.what());
  } catch (const std::bad_alloc&) {
    // The memory guard's estimate fell short (or other processes took the memory meanwhile).
    return fail(2, "out of memory: this configuration is too large for this machine; try a smaller one");
  } catch (const std::exception& e) {
    return fail(1, std::string("internal error: ") + e.what());
  }
  return 1;
}
