// Runs the ultrasim binary as a subprocess (SimGrid allows one simulation per process) and captures
// its exit status, standard output and standard error.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ultrasim::test {

struct CliResult {
  int status = -1;
  std::string out, err;
  double wall_s = 0;      // from spawn to exit
  long peak_rss_kib = 0;  // the child's peak resident memory (getrusage's ru_maxrss)
};

// `args` are passed without a shell; the binary is the one built with the tests.
CliResult run_cli(const std::vector<std::string>& args);
// run_cli with the standard output on `stdout_path` (left there; `out` stays empty) and, when `file_limit`
// > 0, a file-size limit of that many bytes (RLIMIT_FSIZE, SIGXFSZ ignored: a write past it fails with
// EFBIG, as on a full disk).
CliResult run_cli_to(const std::vector<std::string>& args, const std::string& stdout_path,
                     long file_limit = 0);
// run_cli with the standard input and error on a pseudo-terminal, as at a user's terminal with the result
// redirected (`ultrasim serve > result.txt`): `err` is what the terminal showed (its "\n" as "\r\n").
CliResult run_cli_at_terminal(const std::vector<std::string>& args);
// Runs `run ... --format json` and parses the object; fails the test if the run did not exit 0.
nlohmann::json run_json(std::vector<std::string> args);
// Runs `args` (any command, its own --format json among them) and parses the object; fails the test if it
// did not exit 0.
nlohmann::json cli_json(const std::vector<std::string>& args);
// Starts the binary with `args` in a process group of its own (a terminal's Ctrl-C and Slurm's SIGTERM
// reach such a group: kill(-pid, ...)), its standard error on `stderr_path`, its environment this one's with
// `env` ("NAME=value") replacing or adding; returns its pid, for waitpid.
int spawn_in_group(const std::vector<std::string>& args, const std::string& stderr_path,
                   const std::vector<std::string>& env = {});
// Runs a collective (`--set` for each of `sets`) and checks what holds wherever the closed form is exact:
// the result verified, the simulated time within 0.1 % of model_s and not below bound_s; where the default
// engine was the contention-free one, SimGrid's time agrees (to 1e-9, or 1 ps) and its result verifies.
// Returns the default engine's JSON.
nlohmann::json run_exact(const std::string& topology, const std::string& collective,
                         const std::string& algorithm, const std::string& size,
                         const std::vector<std::string>& sets = {});
// Writes `text` to a fresh temp file called `name`, runs `workload FILE --format json` on it and parses
// the result; fails the test if it did not exit 0.
nlohmann::json workload_json(const std::string& text, const std::string& name);
// Checks that `args` fail as bad input: exit status 2, nothing on stdout, one "ultrasim: error: " line on
// stderr containing `fragment`; and, outside the sanitizer build, fast and small as every refusal must
// be (issue "hardening, round two"): within 5 s and 512 MiB peak (a refusal takes ~0.05 s and ~20 MiB:
// the limits catch a parser that reads or builds before it refuses, not a slow machine).
void expect_input_error(const std::vector<std::string>& args, const std::string& fragment);
std::string read_file(const std::string& path);
// Every line of a JSON Lines file (sweep rows, flow records), parsed.
std::vector<nlohmann::json> read_json_lines(const std::string& path);
std::string temp_path(const std::string& name);  // a fresh path under a per-process temp directory
// temp_path(name), holding `text`.
std::string temp_file(const std::string& name, const std::string& text);

// Under the sanitizers (scripts/test --sanitize, which defines ULTRASIM_SANITIZE) every instrumented run is
// 3-4x slower, so the largest grids of runs thin out there: they keep their topologies' kinds,
// collectives and algorithms, which choose the code that runs, and drop repeated sizes and large chip
// counts, which change the numbers it computes, not the code (the normal suite checks every point).
#ifdef ULTRASIM_SANITIZE
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// The points a grid checks: every one of `all` in the normal suite, only `sanitized` under the sanitizers.
template <class T>
std::vector<T> grid(std::vector<T> all, std::vector<T> sanitized) {
  return kSanitized ? std::move(sanitized) : std::move(all);
}
inline std::vector<std::string> grid_sizes(std::vector<std::string> all, std::vector<std::string> sanitized) {
  return grid(std::move(all), std::move(sanitized));
}
// The chip counts a grid checks: all of them, or under the sanitizers those up to 16 (a schedule for 144
// chips runs the code that one for 16 runs, nine times over).
inline std::vector<int> grid_chips(std::vector<int> all) {
  if (kSanitized) std::erase_if(all, [](int p) { return p > 16; });
  return all;
}

}  // namespace ultrasim::test
