#include "topology/base/input_files.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "topology/base/errors.hpp"

namespace ultrasim {

void check_input_file(const std::string& path, const std::string& name, const std::string& expected) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw InputError(name + " is a directory; expected " + expected);
  if (!std::ifstream(path)) throw InputError("cannot read " + name + " (missing or not readable)");
}

std::string read_input_file(const std::string& path, const std::string& name, const std::string& expected) {
  check_input_file(path, name, expected);
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError("cannot read " + name + " (missing or not readable)");
  return text.str();
}

std::string json_error_text(const std::exception& error) {
  const std::string what = error.what();
  const auto bracket = what.find("] ");
  return what.starts_with("[json.exception") && bracket != std::string::npos ? what.substr(bracket + 2)
                                                                             : what;
}

}  // namespace ultrasim
