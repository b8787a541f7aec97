// The output layer: every file ultrasim writes goes through here (traces, flow records, link statistics,
// -o files, sweep rows, --timing). What every output gets:
//   - a target that exists must be a regular file: a symbolic link, directory, FIFO, socket or device is
//     refused before anything runs (InputError), so it is never replaced or written through. One
//     exception: /dev/null itself (the path, not a link to it) is written directly, to discard an output;
//   - no output on an input's file (one that check_input_file passed in this process, or the standard
//     input), on the standard output's file, or on another output's path: each is refused (InputError);
//   - every write and the close are checked: a failed one (a full disk) throws InputError "cannot write
//     <what> '<path>': <reason>" (exit status 2).
// OutputFile writes a temporary file beside the target and renames it over the target only when every
// byte is written: a failed or interrupted run leaves the previous file as it was, and no temporary file
// behind (unless the process is killed). A replaced file keeps its permission bits.
// AppendedFile (a sweep's --out and --timing) writes in place instead: a sweep's rows are appended as its
// points finish, so a killed sweep keeps them and --resume reads them back, which a temporary file
// renamed at the end would lose. A locked one (--out) holds an exclusive flock(2) on the file while the
// sweep runs, and a second sweep on the same file is refused rather than interleaving or truncating its
// rows; replace() rewrites it whole (sorted) through a temporary file that is locked before the rename,
// so the path never names an unlocked file while the sweep runs.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace ultrasim {

class OutputFile {
 public:
  // Gzip-compressed when the name ends in ".gz" (zlib, deterministic: no time stamp in the header), plain
  // otherwise; written as it is produced, so a trace of millions of events never sits whole in memory.
  // Throws InputError (the rules above, or "cannot write <what> '<path>': <reason>").
  OutputFile(const std::string& path, const std::string& what);
  ~OutputFile();  // not closed: the temporary file is removed, the target untouched
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  OutputFile& operator<<(std::string_view text);
  // Flushes, closes and renames over the target; throws InputError if a write failed (a full disk) or if
  // the target has become an input read since it was opened.
  void close();

  static bool gzipped(const std::string& path);  // the name ends in ".gz"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A file written in place and appended to (see above). `lock`: take an exclusive flock for the object's
// life, refusing (InputError "... is being written by another ultrasim process") if another holds it; a
// locked file must be a regular one (not even /dev/null).
class AppendedFile {
 public:
  AppendedFile(const std::string& path, const std::string& what, bool lock);
  ~AppendedFile();
  AppendedFile(const AppendedFile&) = delete;
  AppendedFile& operator=(const AppendedFile&) = delete;

  void truncate();                      // empties the file
  void append(std::string_view text);   // one write(2) of the whole text (O_APPEND); throws InputError
  void replace(std::string_view text);  // locked only: the whole file, through a locked temporary file
  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Checks the standard output at exit: flushes it and returns the message if a write to it failed (a full
// disk, /dev/full), else "".
std::string standard_output_error();

// `text` as a terminal may show it: control characters (an escape sequence in a model's name from a file
// would clear the screen) and bytes that are not UTF-8 written as \xNN; line breaks and tabs kept when
// `keep_lines` (a table), escaped too otherwise (an error's one line). Every table and error goes through it.
std::string printable_text(const std::string& text, bool keep_lines);

// Where temporary files go: $TMPDIR (Slurm sets one per job), else /tmp. InputError naming $TMPDIR if it
// is not a directory.
std::string temp_directory();

}  // namespace ultrasim
