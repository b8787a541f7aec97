#include "workloads/collective/traffic_matrix_file.hpp"

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {
namespace {

using Rows = std::vector<std::vector<std::uint64_t>>;

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// One entry written as text ("4096", "64KiB"), with the reason when it is not a byte count.
std::uint64_t entry_bytes(const std::string& text, const std::string& where) {
  if (!text.empty() && text.front() == '-')
    throw InputError(where + ": '" + text + "' is negative; entries are byte counts >= 0");
  try {
    return parse_bytes(text);
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
}

std::uint64_t json_entry_bytes(const nlohmann::json& value, const std::string& where) {
  if (value.is_number_unsigned())
    return with_context(where, [&] { return checked_bytes(value.get<std::uint64_t>()); });
  if (value.is_number_integer() || (value.is_number_float() && value.get<double>() < 0))
    throw InputError(where + ": " + value.dump() + " is negative; entries are byte counts >= 0");
  if (value.is_number_float()) {
    double bytes = value.get<double>();
    if (bytes != std::floor(bytes) || bytes > kMaxBytes)
      throw InputError(where + ": " + value.dump() + " is not a whole number of bytes");
    return static_cast<std::uint64_t>(bytes);
  }
  if (value.is_string()) return entry_bytes(trim(value.get<std::string>()), where);
  throw InputError(where + ": expected a byte count (an integer or a string such as \"64KiB\"), got " +
                   value.dump());
}

Rows json_rows(const std::string& text, const std::string& name) {
  nlohmann::json doc;
  try {
    doc = parse_json_input(text, name);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(name + ": invalid JSON: " + json_error_text(e));
  }
  const char* expected = "expected an array of rows or {\"bytes\": [[...], ...]}";
  if (doc.is_object()) {
    if (!doc.contains("bytes")) throw InputError(name + ": no \"bytes\" key; " + expected);
    doc = doc["bytes"];
  }
  if (!doc.is_array()) throw InputError(name + ": " + expected);
  Rows rows;
  for (std::size_t r = 0; r < doc.size(); ++r) {
    if (!doc[r].is_array())
      throw InputError(name + ": row " + std::to_string(r) + " is not an array; " + expected);
    rows.emplace_back();
    for (std::size_t c = 0; c < doc[r].size(); ++c)
      rows.back().push_back(
          json_entry_bytes(doc[r][c], name + ": row " + std::to_string(r) + ", column " + std::to_string(c)));
  }
  return rows;
}

// Rows with the line each came from, for messages.
Rows csv_rows(const std::string& text, const std::string& name, std::vector<int>& lines) {
  Rows rows;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    rows.emplace_back();
    lines.push_back(number);
    std::istringstream fields(line);
    std::string field;
    int column = 0;
    while (std::getline(fields, field, ','))
      rows.back().push_back(entry_bytes(
          trim(field), name + ": line " + std::to_string(number) + ", field " + std::to_string(++column)));
    if (line.back() == ',')
      throw InputError(name + ": line " + std::to_string(number) + " ends with an empty field");
  }
  return rows;
}

}  // namespace

TrafficMatrix read_traffic_matrix(const std::string& path) {
  const std::string name = "traffic matrix '" + path + "'";
  const std::string text = read_input_file(path, name, "a JSON or CSV file");

  const auto first = text.find_first_not_of(" \t\r\n");
  const bool json = first != std::string::npos && (text[first] == '{' || text[first] == '[');
  std::vector<int> lines;  // CSV: the line of each row
  Rows rows = json ? json_rows(text, name) : csv_rows(text, name, lines);
  auto row_name = [&](std::size_t r) {
    return json ? "row " + std::to_string(r) : "line " + std::to_string(lines[r]);
  };

  if (rows.empty()) throw InputError(name + ": no rows; expected p rows of p byte counts");
  for (std::size_t r = 0; r < rows.size(); ++r)
    if (rows[r].size() != rows.front().size())
      throw InputError(name + ": " + row_name(r) + " has " + std::to_string(rows[r].size()) +
                       " entries but " + row_name(0) + " has " + std::to_string(rows.front().size()) +
                       " (ragged rows)");
  if (rows.size() != rows.front().size())
    throw InputError(name + ": " + std::to_string(rows.size()) + " rows of " +
                     std::to_string(rows.front().size()) +
                     " entries; expected a square p x p matrix (row = sender, column = receiver)");
  try {
    return TrafficMatrix(rows);
  } catch (const InputError&) {  // the shape is checked above: only the sums can fail
    throw InputError(name + ": a row or column adds up to more than 2^64 bytes");
  }
}

}  // namespace ultrasim
