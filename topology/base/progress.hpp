// Progress of long work on the standard error, as a sweep shows it: one line, redrawn in place,
//   <what> [done/total] 0:00:12 elapsed, ETA 0:00:30
// only while the standard error is a terminal: into a pipe or a file (a script, a test, a sweep's own
// points) nothing is written. The ETA is the pace of the work done so far in this run applied to what is
// left. At most one line shows at a time: a Progress made while another is live stays silent (the
// outer one speaks for both), and the line is ended when its Progress goes.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace ultrasim {

class Progress {
 public:
  // `total` units of work, `done` of them finished before this run (a resumed sweep's rows: they count
  // towards the total but not the pace). The line shows at once.
  Progress(std::string what, std::size_t total, std::size_t done = 0);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(std::size_t units = 1);  // redrawn at most ten times a second, and at the last unit
  void update(std::size_t done);        // `done` units finished in all (work that restarts: a re-run)
  std::size_t done() const { return done_; }

 private:
  void draw();

  std::string what_;
  std::size_t total_, resumed_, done_;
  bool shown_;  // on a terminal, and the outermost
  std::chrono::steady_clock::time_point start_, drawn_;
};

// "H:MM:SS", whole seconds.
std::string clock_text(double seconds);

}  // namespace ultrasim
