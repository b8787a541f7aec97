#include "topology/base/input_files.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "topology/base/errors.hpp"

namespace ultrasim {
namespace {

std::vector<InputSeen>& seen_inputs() {
  static std::vector<InputSeen> inputs;
  return inputs;
}

std::string limit_text(std::uint64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

std::string too_large(const std::string& name, const std::string& size, std::uint64_t limit) {
  return name + " is " + size + ", over the " + limit_text(limit) + " limit of an input file";
}

// The parse callback of both JSON flavours: depth and repeated keys; `last_key` is the key read last.
template <class Json>
typename Json::parser_callback_t json_guard(std::vector<std::set<std::string>>& keys, std::string& last_key,
                                            const std::string& name) {
  return [&keys, &last_key, &name](int depth, nlohmann::json::parse_event_t event, Json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if ((event == Event::object_start || event == Event::array_start) && depth >= kJsonDepthLimit)
      throw InputError(name + ": JSON nested deeper than " + std::to_string(kJsonDepthLimit) + " levels");
    if (event == Event::object_start) keys.emplace_back();
    if (event == Event::object_end && !keys.empty()) keys.pop_back();
    if (event == Event::key) last_key = parsed.template get<std::string>();
    if (event == Event::key && !keys.empty() &&
        !keys.back().insert(parsed.template get<std::string>()).second)
      throw InputError(name + ": key \"" + parsed.template get<std::string>() +
                       "\" appears twice in one object");
    return true;
  };
}

// Every JSON input goes through here: a number no double holds (1e309) is bad input naming the field
// read last (the library's own words, "number overflow parsing '1e309'", say which number).
template <class Json>
Json parse_guarded(const std::string& text, const std::string& name) {
  std::vector<std::set<std::string>> keys;
  std::string last_key;
  try {
    return Json::parse(text, json_guard<Json>(keys, last_key, name));
  } catch (const nlohmann::json::out_of_range& e) {
    std::string what = e.what();
    if (const std::size_t at = what.find("] "); at != std::string::npos) what.erase(0, at + 2);
    throw InputError(name + ": " + (last_key.empty() ? "a number" : "field \"" + last_key + "\"") +
                     " is out of range (" + what + "); expected a finite number");
  }
}

}  // namespace

void check_input_file(const std::string& path, const std::string& name, const std::string& expected,
                      std::uint64_t limit) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 && path == "-")
    throw InputError(name +
                     ": standard input ('-') is not read here; give a file's path (from a pipe: "
                     "/dev/stdin)");
  if (::stat(path.c_str(), &info) != 0)
    throw InputError("cannot read " + name + " (missing or not readable)");
  if (S_ISDIR(info.st_mode)) throw InputError(name + " is a directory; expected " + expected);
  if (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode) || S_ISSOCK(info.st_mode))
    throw InputError(name + " is a device, not a file; expected " + expected);
  if (S_ISREG(info.st_mode) && static_cast<std::uint64_t>(info.st_size) > limit)
    throw InputError(too_large(name, std::to_string(info.st_size) + " bytes", limit));
  if (!std::ifstream(path)) throw InputError("cannot read " + name + " (missing or not readable)");
  const InputSeen seen{static_cast<std::uint64_t>(info.st_dev), static_cast<std::uint64_t>(info.st_ino),
                       name};
  std::vector<InputSeen>& all = seen_inputs();
  if (std::none_of(all.begin(), all.end(),
                   [&](const InputSeen& x) { return x.device == seen.device && x.inode == seen.inode; }))
    all.push_back(seen);
}

const std::vector<InputSeen>& inputs_seen() {
  return seen_inputs();
}

std::string read_input_file(const std::string& path, const std::string& name, const std::string& expected,
                            std::uint64_t limit) {
  check_input_file(path, name, expected, limit);
  std::ifstream in(path, std::ios::binary);
  return read_input_stream(in, name, limit);
}

std::string read_input_stream(std::istream& in, const std::string& name, std::uint64_t limit) {
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > limit)
      throw InputError(too_large(name, "more than " + std::to_string(limit) + " bytes", limit));
  }
  if (in.bad()) throw InputError("cannot read " + name + " (missing or not readable)");
  return text;
}

nlohmann::json parse_json_input(const std::string& text, const std::string& name) {
  return parse_guarded<nlohmann::json>(text, name);
}

nlohmann::ordered_json parse_ordered_json_input(const std::string& text, const std::string& name) {
  return parse_guarded<nlohmann::ordered_json>(text, name);
}

nlohmann::json parse_json_text(const std::string& text, const std::string& name) {
  try {
    return parse_guarded<nlohmann::json>(text, name);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(name + ": not valid JSON (" + e.what() + ")");
  }
}

void check_xml_depth(const std::string& text, const std::string& name) {
  int depth = 0;
  auto skip_past = [&](std::size_t from, const char* end) {
    const std::size_t at = text.find(end, from);
    return at == std::string::npos ? text.size() : at + std::char_traits<char>::length(end);
  };
  for (std::size_t i = text.find('<'); i < text.size(); i = text.find('<', i)) {
    if (text.compare(i, 4, "<!--") == 0) {
      i = skip_past(i + 4, "-->");
    } else if (text.compare(i, 9, "<![CDATA[") == 0) {
      i = skip_past(i + 9, "]]>");
    } else if (text.compare(i, 2, "<?") == 0) {
      i = skip_past(i + 2, "?>");
    } else if (text.compare(i, 2, "<!") == 0) {
      i = skip_past(i + 2, ">");
    } else if (text.compare(i, 2, "</") == 0) {
      depth = std::max(0, depth - 1);
      i = skip_past(i + 2, ">");
    } else {  // a start tag: find its end outside quoted attribute values
      char quote = 0;
      std::size_t j = i + 1;
      for (; j < text.size(); ++j) {
        if (quote != 0) {
          if (text[j] == quote) quote = 0;
        } else if (text[j] == '"' || text[j] == '\'') {
          quote = text[j];
        } else if (text[j] == '>') {
          break;
        }
      }
      if (j >= text.size()) return;  // unterminated: the parser says so
      if (text[j - 1] != '/' && ++depth > kXmlDepthLimit)
        throw InputError(name + ": XML nested deeper than " + std::to_string(kXmlDepthLimit) + " elements");
      i = j + 1;
    }
  }
}

std::string json_error_text(const std::exception& error) {
  const std::string what = error.what();
  const auto bracket = what.find("] ");
  return what.starts_with("[json.exception") && bracket != std::string::npos ? what.substr(bracket + 2)
                                                                             : what;
}

}  // namespace ultrasim

namespace ultrasim {

std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  bool quoted = false;
  for (const char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      out.push_back(cell), cell.clear();
    else if (c != '\r')
      cell += c;
  }
  out.push_back(cell);
  for (auto& s : out) {
    const auto a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
    s = a == std::string::npos ? "" : s.substr(a, b - a + 1);
  }
  return out;
}

std::vector<TextRecord> text_records(const std::string& text, const std::string& name, const std::string& key,
                                     std::size_t limit) {
  std::vector<TextRecord> out;
  auto full = [&] {
    if (out.size() >= limit)
      throw InputError(name + ": more than " + std::to_string(limit) + " records (merge or sample them)");
  };
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    const nlohmann::json j = parse_json_text(text, name);
    for (std::size_t i = 0; i < j.size(); ++i) {
      full();
      TextRecord r{name + " entry " + std::to_string(i), {}};
      if (!j[i].is_object()) throw InputError(r.where + ": expected an object");
      for (const auto& [k, v] : j[i].items()) r.fields[k] = v.is_string() ? v.get<std::string>() : v.dump();
      out.push_back(std::move(r));
    }
    return out;
  }
  std::istringstream lines(text);
  std::string line;
  std::vector<std::string> header;
  for (int n = 1; std::getline(lines, line); ++n) {
    const auto at = line.find_first_not_of(" \t\r");
    if (at == std::string::npos || line[at] == '#') continue;
    const std::string where = name + " line " + std::to_string(n);
    const auto cells = csv_cells(line);
    if (header.empty()) {
      header = cells;
      if (std::find(header.begin(), header.end(), key) == header.end())
        throw InputError(where + ": expected a header naming the columns (" + key + ", ...)");
      for (std::size_t i = 0; i < header.size(); ++i)
        if (std::find(header.begin(), header.begin() + static_cast<long>(i), header[i]) !=
            header.begin() + static_cast<long>(i))
          throw InputError(where + ": column '" + header[i] + "' appears twice in the header");
      continue;
    }
    full();
    if (cells.size() != header.size())
      throw InputError(where + ": " + std::to_string(cells.size()) + " cells, the header has " +
                       std::to_string(header.size()));
    TextRecord r{where, {}};
    for (std::size_t i = 0; i < header.size(); ++i) r.fields[header[i]] = cells[i];
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace ultrasim
