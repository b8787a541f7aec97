#include "sim/engines/records.hpp"

#include "topology/base/suggest.hpp"

namespace ultrasim {

const std::vector<EngineName>& engine_names() {
  static const std::vector<EngineName> names{
      {Engine::kAuto, "auto"},     {Engine::kContentionFree, "contention-free"},
      {Engine::kFlow, "flow"},     {Engine::kFast, "fast"},
      {Engine::kMatrix, "matrix"}, {Engine::kSimGrid, "simgrid"}};
  return names;
}

std::string engine_choices() {
  std::string out;
  for (const auto& entry : engine_names()) out += (out.empty() ? "" : "|") + entry.name;
  return out;
}

Engine parse_engine(const std::string& name) {
  return find_by_name(engine_names(), name, "engine").id;
}

const char* engine_name(Engine engine) {
  for (const auto& entry : engine_names())
    if (entry.id == engine) return entry.name.c_str();
  return engine_names().front().name.c_str();
}

std::string engine_help(const std::string& auto_does) {
  const Option<std::string> o = engine_option<std::string>(
      [](auto& s) -> auto& { return s; }, auto_does);
  return o.meaning + " (" + o.takes + "; default auto)";
}

}  // namespace ultrasim
