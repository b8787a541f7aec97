// Reading the user's input files and writing JSON text, the same way for every reader (topologies,
// schedules, traffic matrices, sweep files and rows, platforms): one message per kind of failure.
#pragma once

#include <exception>
#include <string>

#include <nlohmann/json.hpp>

namespace ultrasim {

// Throws InputError "<name> is a directory; expected <expected>" or "cannot read <name> (missing or not
// readable)"; `name` says what the file is, e.g. "sweep file 'x.json'".
void check_input_file(const std::string& path, const std::string& name, const std::string& expected);
// check_input_file, then the file's bytes.
std::string read_input_file(const std::string& path, const std::string& name, const std::string& expected);

// nlohmann's exception text without its "[json.exception.parse_error.101] " prefix.
std::string json_error_text(const std::exception& error);

// JSON text for output: bytes that are not UTF-8 (a path given in another encoding) become U+FFFD
// instead of an exception.
template <class Json>
std::string json_text(const Json& json, int indent = -1) {
  return json.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ultrasim
