// The program's one logger (spdlog): "ultrasim: [LEVEL] message" lines on the standard error, apart from
// results (standard output) and from errors (one "ultrasim: error: ..." line, exit status 2). Its level
// is --log-level, else the environment variable ULTRASIM_LOG_LEVEL, else warn: by default a run writes
// only warnings. Every layer may log through it.
#pragma once

#include <string>

#include <spdlog/spdlog.h>

namespace ultrasim {

// The logger, created on first use at level warn.
spdlog::logger& logger();

// Sets the logger's level from `word` (trace, debug, info, warn, error, off); InputError naming `source`
// (--log-level, ULTRASIM_LOG_LEVEL) with "did you mean" for any other word.
void set_log_level(const std::string& word, const std::string& source);

// The level names, for help texts: "trace|debug|info|warn|error|off".
std::string log_level_choices();

}  // namespace ultrasim
