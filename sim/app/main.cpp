// ultrasim: the command-line program. Parses the user's words, runs one command (sim/app/commands/, one
// file each), and maps errors to exit statuses: 0 success, 2 bad input, 3 simulation failed or did not
// verify, 1 internal error, 130 interrupted (Ctrl-C; 143 for SIGTERM: what finished is kept, and the
// message says so). A failed write (an output file or the standard output on a full disk) is exit status
// 2, as any output that cannot be written where the user asked (topology/base/output_file.hpp).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>

#include <CLI/CLI.hpp>

#include "sim/analysis/report.hpp"
#include "sim/app/commands/command.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/log.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/suggest.hpp"

namespace {

using namespace ultrasim;

// An error message as one printable line (printable_text), a message quoting a huge value cut.
std::string one_line(const std::string& text) {
  constexpr std::size_t kMaxBytes = 2000;
  std::string out = printable_text(text.substr(0, kMaxBytes), false);
  if (text.size() > kMaxBytes) out += "...";
  return out;
}

// An empty argument (--trace '', --out=) is a value left out by mistake: no option takes one, and an
// empty path or list would otherwise read as "not given". The message, or "" when there is none.
std::string empty_argument(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.empty())
      return i > 1 && argv[i - 1][0] == '-'
                 ? std::string(argv[i - 1]) + " is given an empty value"
                 : "argument " + std::to_string(i) + " is empty; expected a command, an option or a value";
    if (arg.rfind("--", 0) == 0 && arg.back() == '=')
      return arg.substr(0, arg.size() - 1) + " is given an empty value";
  }
  return "";
}

// CLI11's "--model excludes --model-file": two ways of saying one thing, given together.
std::string exclusive_message(const CLI::ExcludesError& e) {
  std::string what = e.what();
  if (const std::size_t at = what.find(" excludes "); at != std::string::npos)
    what = what.substr(0, at) + " and " + what.substr(at + 10) + " are mutually exclusive; give one";
  return what;
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

  if (const std::string empty = empty_argument(argc, argv); !empty.empty()) return fail(2, empty);
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
  } catch (const CLI::ExcludesError& e) {
    return fail(2, exclusive_message(e));
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
  } catch (const Interrupted& e) {
    std::cerr << "ultrasim: " << one_line(e.what()) << "\n";
    return e.status();
  } catch (const std::bad_alloc&) {
    // The memory guard's estimate fell short (or other processes took the memory meanwhile).
    return fail(2, "out of memory: this configuration is too large for this machine; try a smaller one");
  } catch (const std::exception& e) {
    return fail(1, std::string("internal error: ") + e.what());
  }
  return 1;
}
