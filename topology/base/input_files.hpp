// Reading the user's input files and writing JSON text, the same way for every reader (topologies,
// schedules, traffic matrices, sweep files and rows, stacks, workload files, logs, platforms): one
// message per kind of failure, each naming the file.
//
// What every input file gets, before anything is parsed:
//   - a size limit, read from the file system first (a regular file over it is refused unread) and
//     enforced while reading (a pipe stops at the limit);
//   - no devices: a character or block device (/dev/zero, a terminal) or a socket is refused unread;
//   - JSON nested at most kJsonDepthLimit levels, and no key twice in one object (parse_json_input);
//   - XML nested at most kXmlDepthLimit elements (check_xml_depth; the XML parsers recurse).
#pragma once

#include <cstdint>
#include <exception>
#include <istream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ultrasim {

// The size limit of an input file, bytes (64 MiB: a 1,152-chip traffic matrix in JSON is ~15 MB).
inline constexpr std::uint64_t kInputFileLimit = 64ull << 20;
// Nesting limits. No input kind needs more than a handful of levels (a schedule: 5).
inline constexpr int kJsonDepthLimit = 64;
inline constexpr int kXmlDepthLimit = 64;

// Throws InputError "<name> is a directory; expected <expected>", "<name> is a device, not a file",
// "<name> is N bytes, over the 64 MiB limit of an input file" or "cannot read <name> (missing or not
// readable)"; `name` says what the file is, e.g. "sweep file 'x.json'".
void check_input_file(const std::string& path, const std::string& name, const std::string& expected,
                      std::uint64_t limit = kInputFileLimit);
// Every input file check_input_file has passed in this process, by identity (device, inode) and name: the
// output layer (output_file.hpp) refuses to write over one of them.
struct InputSeen {
  std::uint64_t device = 0, inode = 0;
  std::string name;
};
const std::vector<InputSeen>& inputs_seen();

// check_input_file, then the file's bytes (at most `limit`).
std::string read_input_file(const std::string& path, const std::string& name, const std::string& expected,
                            std::uint64_t limit = kInputFileLimit);

// The bytes of `in` (standard input), at most `limit`; throws InputError as read_input_file does.
std::string read_input_stream(std::istream& in, const std::string& name,
                              std::uint64_t limit = kInputFileLimit);

// `text` parsed as JSON. A syntax error throws nlohmann's parse_error (callers say where it is); nesting
// deeper than kJsonDepthLimit or a key repeated in one object throws InputError "<name>: ...".
nlohmann::json parse_json_input(const std::string& text, const std::string& name);
nlohmann::ordered_json parse_ordered_json_input(const std::string& text, const std::string& name);
// `text` (the contents of `name`) parsed as parse_json_input does, a syntax error too an InputError:
// "<name>: not valid JSON (<where>)".
nlohmann::json parse_json_text(const std::string& text, const std::string& name);

// The cells of one CSV line: split at commas outside double quotes, quotes dropped, each cell trimmed of
// blanks and a carriage return.
std::vector<std::string> csv_cells(const std::string& line);

// A table of records as text fields: `text` (the contents of `name`) as a CSV whose first non-blank,
// non-'#' line is a header naming the columns (it must name `key`), or a JSON array of objects (values
// as their text: a string's characters, a number as JSON writes it). Each record comes with where it is
// ("<name> line 7", "<name> entry 3"). InputError for a header without `key` or with a column twice, a
// row whose cells do not match the header, an entry that is not an object, or more than `limit` records.
struct TextRecord {
  std::string where;
  std::map<std::string, std::string> fields;
};
std::vector<TextRecord> text_records(const std::string& text, const std::string& name, const std::string& key,
                                     std::size_t limit);

// Throws InputError "<name>: XML nested deeper than kXmlDepthLimit elements" (comments, CDATA,
// declarations and quoted attribute values are skipped; the parser reports any other malformation).
void check_xml_depth(const std::string& text, const std::string& name);

// nlohmann's exception text without its "[json.exception.parse_error.101] " prefix.
std::string json_error_text(const std::exception& error);

// JSON text for output: bytes that are not UTF-8 (a path given in another encoding) become U+FFFD
// instead of an exception.
template <class Json>
std::string json_text(const Json& json, int indent = -1) {
  return json.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ultrasim
