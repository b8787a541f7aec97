#include "topology/base/log.hpp"

#include <memory>
#include <vector>

#include <spdlog/sinks/stdout_sinks.h>

#include "topology/base/errors.hpp"
#include "topology/base/suggest.hpp"

namespace ultrasim {
namespace {

const std::vector<std::pair<std::string, spdlog::level::level_enum>>& levels() {
  static const std::vector<std::pair<std::string, spdlog::level::level_enum>> table{
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug}, {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},   {"error", spdlog::level::err},   {"off", spdlog::level::off}};
  return table;
}

}  // namespace

spdlog::logger& logger() {
  static const std::shared_ptr<spdlog::logger> log = [] {
    auto made =
        std::make_shared<spdlog::logger>("ultrasim", std::make_shared<spdlog::sinks::stderr_sink_st>());
    made->set_pattern("ultrasim: [%l] %v");
    made->set_level(spdlog::level::warn);
    made->flush_on(spdlog::level::trace);  // each line as it is written, as errors are
    return made;
  }();
  return *log;
}

void set_log_level(const std::string& word, const std::string& source) {
  std::vector<std::string> names;
  for (const auto& [name, level] : levels()) {
    if (name == word) return logger().set_level(level);
    names.push_back(name);
  }
  throw InputError(unknown_name_message(source + " level", word, names));
}

std::string log_level_choices() {
  std::string out;
  for (const auto& [name, level] : levels()) out += (out.empty() ? "" : "|") + name;
  return out;
}

}  // namespace ultrasim
