// A file that ultrasim writes (traces, flow records): gzip-compressed when its name ends in ".gz" (zlib,
// deterministic: no time stamp in the header), plain otherwise. Written as it is produced, so a trace
// of millions of events never sits whole in memory.
#pragma once

#include <fstream>
#include <memory>
#include <string>
#include <string_view>

namespace ultrasim {

class OutputFile {
 public:
  // Throws InputError "cannot write <what> '<path>'" if the file cannot be created.
  OutputFile(const std::string& path, const std::string& what);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  OutputFile& operator<<(std::string_view text);
  // Flushes and closes; throws InputError if a write failed (a full disk). The destructor closes too,
  // silently.
  void close();

  static bool gzipped(const std::string& path);  // the name ends in ".gz"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A plain output file opened before any simulation, so an unwritable path fails fast as bad input:
// throws InputError "cannot write <what> '<path>'".
std::unique_ptr<std::ofstream> open_output(const std::string& path, const char* what);

}  // namespace ultrasim
