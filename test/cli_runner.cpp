#include "cli_runner.hpp"

#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <chrono>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

namespace ultrasim::test {

void expect_input_error(const std::vector<std::string>& args, const std::string& fragment) {
  CliResult r = run_cli(args);
  INFO("args: " << nlohmann::json(args).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\nstderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("ultrasim: error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line
  CHECK_THAT(r.err, Catch::Contains(fragment));
#ifndef ULTRASIM_SANITIZE
  CHECK(r.wall_s < 5.0);
  CHECK(r.peak_rss_kib <= 512 * 1024);
#endif
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

nlohmann::json workload_json(const std::string& text, const std::string& name) {
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  CliResult r = run_cli({"workload", path, "--format", "json"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.out);
}

std::vector<nlohmann::json> read_json_lines(const std::string& path) {
  std::vector<nlohmann::json> rows;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

std::string temp_path(const std::string& name) {
  static const std::string dir = [] {
    char pattern[] = "/tmp/ultrasim-test-XXXXXX";
    return std::string(mkdtemp(pattern));
  }();
  return dir + "/" + name;
}

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

namespace {

// The binary and `args`, as execv takes them (pointing into `full`, which must outlive them).
std::vector<char*> argv_of(std::vector<std::string>& full) {
  std::vector<char*> argv;
  for (auto& a : full) argv.push_back(a.data());
  argv.push_back(nullptr);
  return argv;
}

// Waits for child `pid`, started at `started`: its status, wall time and peak memory into `result`.
void wait_child(pid_t pid, std::chrono::steady_clock::time_point started, CliResult& result) {
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.peak_rss_kib = usage.ru_maxrss;
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

CliResult run_cli_to(const std::vector<std::string>& args, const std::string& stdout_path, long file_limit) {
  static int counter = 0;
  const std::string err_path = temp_path("err" + std::to_string(++counter));
  std::vector<std::string> full{ULTRASIM_BINARY};
  full.insert(full.end(), args.begin(), args.end());
  const std::vector<char*> argv = argv_of(full);
  const auto started = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int in = open("/dev/null", O_RDONLY);
    const int out = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) _exit(126);
    dup2(in, 0), dup2(out, 1), dup2(err, 2);
    if (file_limit > 0) {
      signal(SIGXFSZ, SIG_IGN);
      const struct rlimit limit { static_cast<rlim_t>(file_limit), static_cast<rlim_t>(file_limit) };
      setrlimit(RLIMIT_FSIZE, &limit);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  CliResult result;
  wait_child(pid, started, result);
  result.err = read_file(err_path);
  unlink(err_path.c_str());
  return result;
}

CliResult run_cli(const std::vector<std::string>& args) {
  static int counter = 0;
  const std::string out_path = temp_path("out" + std::to_string(++counter));
  CliResult result = run_cli_to(args, out_path);
  result.out = read_file(out_path);
  unlink(out_path.c_str());
  return result;
}

CliResult run_cli_at_terminal(const std::vector<std::string>& args) {
  static int counter = 0;
  const std::string out_path = temp_path("terminal-out" + std::to_string(++counter));
  std::vector<std::string> full{ULTRASIM_BINARY};
  full.insert(full.end(), args.begin(), args.end());
  const std::vector<char*> argv = argv_of(full);
  const auto started = std::chrono::steady_clock::now();
  int terminal = -1;
  const pid_t pid = forkpty(&terminal, nullptr, nullptr, nullptr);  // the child's 0, 1 and 2: the terminal
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) _exit(126);
    dup2(out, 1);
    execv(argv[0], argv.data());
    _exit(127);
  }
  CliResult result;
  char buffer[4096];
  for (;;) {  // until the child's side closes (EIO)
    const ssize_t n = read(terminal, buffer, sizeof buffer);
    if (n > 0) result.err.append(buffer, static_cast<std::size_t>(n));
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  close(terminal);
  wait_child(pid, started, result);
  result.out = read_file(out_path);
  unlink(out_path.c_str());
  return result;
}

nlohmann::json cli_json(const std::vector<std::string>& args) {
  const CliResult r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.out);
}

int spawn_in_group(const std::vector<std::string>& args, const std::string& stderr_path,
                   const std::vector<std::string>& env) {
  std::vector<std::string> full{ULTRASIM_BINARY};
  full.insert(full.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : full) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> vars = env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string var(*e);
    const bool replaced = std::any_of(
        vars.begin(), vars.begin() + static_cast<long>(env.size()),
        [&](const auto& v) { return var.compare(0, v.find('=') + 1, v, 0, v.find('=') + 1) == 0; });
    if (!replaced) vars.push_back(var);
  }
  std::vector<char*> envp;
  for (auto& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, argv[0], &files, &attributes, argv.data(), envp.data()) == 0);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attributes);
  return pid;
}

nlohmann::json run_json(std::vector<std::string> args) {
  args.insert(args.begin(), "run");
  args.push_back("--format");
  args.push_back("json");
  CliResult r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.out);
}

nlohmann::json run_exact(const std::string& topology, const std::string& collective,
                         const std::string& algorithm, const std::string& size,
                         const std::vector<std::string>& sets) {
  std::vector<std::string> args{"--topology",  topology,  "--collective", collective,
                                "--algorithm", algorithm, "--size",       size};
  for (const auto& set : sets) args.insert(args.end(), {"--set", set});
  auto j = run_json(args);
  INFO(topology << " " << collective << " " << algorithm << " " << size << ": time " << j["time_s"]
                << " model " << j["model_s"]);
  CHECK(j["verified"] == true);
  double time = j["time_s"], model = j["model_s"], bound = j["bound_s"];
  CHECK(std::abs(time - model) <= 1e-3 * model);
  CHECK(time >= bound * (1 - 1e-9));
  // Where the contention-free engine ran, SimGrid must agree with it: every exact case checks both. SimGrid
  // lands events within its precision (surf/precision: 1e-13 s), so it may be off by a few 1e-13 s.
  if (j["engine"] == "contention-free") {
    args.insert(args.end(), {"--engine", "simgrid"});
    auto s = run_json(args);
    CHECK(s["verified"] == true);
    CHECK(s["time_s"].get<double>() == Approx(time).epsilon(1e-9).margin(1e-12));
    CHECK(s["transfers"] == j["transfers"]);
  }
  return j;
}

}  // namespace ultrasim::test
