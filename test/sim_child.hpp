// Runs a SimGrid simulation in a forked child and returns the numbers it produced. SimGrid's engine
// cannot be reset, and Catch2 re-enters a TEST_CASE per SECTION in one process: forking keeps every
// in-process simulation in a fresh process. in_engine() also makes the child's engine.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/engines/simgrid/platform.hpp"

namespace ultrasim::test {

inline std::vector<double> in_child(const std::function<std::vector<double>()>& simulation) {
  int fd[2];
  REQUIRE(pipe(fd) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fd[0]);
    std::vector<double> values = simulation();
    std::size_t n = values.size();
    if (write(fd[1], &n, sizeof n) != sizeof n) _exit(2);
    if (n && write(fd[1], values.data(), n * sizeof(double)) != static_cast<ssize_t>(n * sizeof(double)))
      _exit(2);
    _exit(0);
  }
  close(fd[1]);
  std::size_t n = 0;
  std::vector<double> values;
  if (read(fd[0], &n, sizeof n) == sizeof n) {
    values.resize(n);
    std::size_t got = 0;
    while (got < n * sizeof(double)) {
      ssize_t r = read(fd[0], reinterpret_cast<char*>(values.data()) + got, n * sizeof(double) - got);
      if (r <= 0) break;
      got += r;
    }
  }
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return values;
}

// in_child(), on a fresh SimGrid engine made first in the child and configured as the runner's
// (configure_engine), with SimGrid's own log lines silenced.
inline std::vector<double> in_engine(
    const std::function<std::vector<double>(simgrid::s4u::Engine&)>& simulation) {
  return in_child([&] {
    std::string arg0 = "ultrasim_tests", arg1 = "--log=root.thres:critical";
    std::vector<char*> argv{arg0.data(), arg1.data(), nullptr};
    int argc = 2;
    simgrid::s4u::Engine engine(&argc, argv.data());
    configure_engine();
    return simulation(engine);
  });
}

}  // namespace ultrasim::test
