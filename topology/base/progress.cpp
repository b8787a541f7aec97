#include "topology/base/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace ultrasim {
namespace {

bool g_live = false;  // a Progress is showing its line

}  // namespace

Progress::Progress(std::string what, std::size_t total, std::size_t done)
    : what_(std::move(what)),
      total_(total),
      resumed_(done),
      done_(done),
      shown_(!g_live && isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      drawn_(start_) {
  if (!shown_) return;
  g_live = true;
  draw();
}

Progress::~Progress() {
  if (!shown_) return;
  g_live = false;
  std::cerr << "\n" << std::flush;
}

void Progress::advance(std::size_t units) {
  update(done_ + units);
}

void Progress::update(std::size_t done) {
  done_ = done;
  if (!shown_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done_ < total_ && now - drawn_ < std::chrono::milliseconds(100)) return;
  drawn_ = now;
  draw();
}

void Progress::draw() {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::size_t ran = done_ > resumed_ ? done_ - resumed_ : 0;  // a restarted count may fall below
  const std::size_t left = done_ < total_ ? total_ - done_ : 0;
  std::cerr << "\r" << what_ << (what_.empty() ? "" : " ") << "[" << done_ << "/" << total_ << "] "
            << clock_text(elapsed) << " elapsed, ETA "
            << (ran > 0 ? clock_text(elapsed / static_cast<double>(ran) * static_cast<double>(left)) : "-")
            << "   " << std::flush;
}

std::string clock_text(double seconds) {
  char text[32];
  const long s = static_cast<long>(seconds);
  std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  return text;
}

}  // namespace ultrasim
