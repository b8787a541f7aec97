// The output layer end to end (topology/base/output_file.hpp): an output never replaces or writes through
// anything but a regular file (bar /dev/null), never lands on an input, on the standard output's file or
// on another output, a sweep's --out has one writer at a time, a failed write exits non-zero with one
// error line, and an output is replaced only whole: no temporary file left, the previous file kept when
// the run fails.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "cli_runner.hpp"

using namespace ultrasim::test;
namespace fs = std::filesystem;

namespace {

const std::string kRows = std::string(ULTRASIM_SOURCE_DIR) + "/test/data/tune/switch8_allreduce.jsonl";

std::vector<std::string> run_args(const std::vector<std::string>& extra) {
  std::vector<std::string> args{"run",         "--topology", "switch:4", "--collective", "allreduce",
                                "--algorithm", "ring",       "--size",   "64KiB"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::vector<std::string> sized_sweep_args(const std::string& sizes, const std::vector<std::string>& extra) {
  std::vector<std::string> args{"sweep",       "--topology", "switch:4", "--collective", "allreduce",
                                "--algorithm", "ring",       "--sizes",  sizes};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// A fresh directory under the test's temp directory.
std::string directory(const std::string& name) {
  const std::string dir = temp_path(name);
  fs::create_directories(dir);
  return dir;
}

std::string write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

// One "ultrasim: error: " line containing `fragment`.
void expect_one_error_line(const CliResult& r, const std::string& fragment) {
  INFO("stderr: " << r.err);
  CHECK(r.err.rfind("ultrasim: error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, Catch::Contains(fragment));
}

// Whether some process holds a flock(2) on `path`'s file, from /proc/locks ("1: FLOCK ADVISORY WRITE
// PID MAJ:MIN:INODE 0 EOF").
bool flock_held(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return false;
  std::ifstream locks("/proc/locks");
  for (std::string line; std::getline(locks, line);) {
    std::istringstream words(line);
    std::string number, kind, mode, access, pid, file;
    words >> number >> kind >> mode >> access >> pid >> file;
    const std::string inode = ":" + std::to_string(info.st_ino);
    if (kind == "FLOCK" && file.size() > inode.size() && file.ends_with(inode)) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("output: a symbolic link, FIFO, directory or device is refused as an output and left as it was") {
  const std::string dir = directory("output_kinds");
  const std::string target = write(dir + "/target.txt", "keep me\n");
  const std::string link = dir + "/link";
  REQUIRE(symlink(target.c_str(), link.c_str()) == 0);
  auto expect_link_intact = [&] {
    struct stat info {};
    REQUIRE(lstat(link.c_str(), &info) == 0);
    CHECK(S_ISLNK(info.st_mode));
    CHECK(fs::read_symlink(link) == target);
    CHECK(read_file(target) == "keep me\n");
  };
  for (const auto& args :
       {run_args({"--trace", link}), run_args({"--flows", link}), run_args({"--link-stats", link}),
        std::vector<std::string>{"topology", "switch:4", "-o", link},
        std::vector<std::string>{"tune", "--from", kRows, "-o", link},
        sized_sweep_args("1KiB", {"--out", link}), sized_sweep_args("1KiB", {"--out", link, "--resume"}),
        sized_sweep_args("1KiB", {"--timing", link})}) {
    expect_input_error(args, "'" + link + "' is a symbolic link; an output must be a regular file");
    expect_link_intact();
  }

  const std::string fifo = dir + "/fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
  // Refused unopened: opening a FIFO to write would block until a reader came.
  expect_input_error(run_args({"--trace", fifo}), "'" + fifo + "' is a FIFO");
  expect_input_error(sized_sweep_args("1KiB", {"--out", fifo}), "'" + fifo + "' is a FIFO");
  expect_input_error(sized_sweep_args("1KiB", {"--timing", fifo}), "'" + fifo + "' is a FIFO");
  struct stat info {};
  REQUIRE(lstat(fifo.c_str(), &info) == 0);
  CHECK(S_ISFIFO(info.st_mode));

  const std::string sub = directory("output_kinds/sub");
  expect_input_error(run_args({"--link-stats", sub}), "link statistics '" + sub + "' is a directory");
  CHECK(fs::is_directory(sub));
  CHECK(fs::is_empty(sub));

  // A device other than /dev/null: refused, as an output option of any command.
  expect_input_error(run_args({"--trace", "/dev/full"}), "trace '/dev/full' is a device");
  expect_input_error({"tune", "--from", kRows, "-o", "/dev/full"}, "output '/dev/full' is a device");
  REQUIRE(lstat("/dev/full", &info) == 0);
  CHECK(S_ISCHR(info.st_mode));
}

TEST_CASE("output: /dev/null discards an output, but cannot be a sweep's --out") {
  CliResult r = run_cli(run_args(
      {"--trace", "/dev/null", "--flows", "/dev/null", "--link-stats", "/dev/null", "--format", "json"}));
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(nlohmann::json::parse(r.out)["verified"] == true);
  struct stat info {};
  REQUIRE(lstat("/dev/null", &info) == 0);
  CHECK(S_ISCHR(info.st_mode));
  // --out is read back (--resume) and sorted in place: it must be a file.
  expect_input_error(sized_sweep_args("1KiB", {"--out", "/dev/null"}), "--out file '/dev/null' is a device");
  const std::string out = temp_path("null_timing.jsonl");
  r = run_cli(sized_sweep_args("1KiB,2KiB", {"--out", out, "--timing", "/dev/null"}));
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(read_json_lines(out).size() == 2);
}

TEST_CASE("output: an output that is also an input is refused, and the input's bytes are unchanged") {
  const std::string dir = directory("output_inputs");
  const std::string rows = write(dir + "/rows.jsonl", read_file(kRows));
  const std::string before = read_file(rows);
  REQUIRE(!before.empty());
  expect_input_error({"tune", "--from", rows, "-o", rows},
                     "output '" + rows + "' is also an input (sweep rows '" + rows + "')");
  CHECK(read_file(rows) == before);
  // The same file under another name: a hard link, a path through "..".
  const std::string hard = dir + "/hard.jsonl";
  REQUIRE(link(rows.c_str(), hard.c_str()) == 0);
  expect_input_error({"tune", "--from", rows, "-o", hard}, "is also an input");
  expect_input_error({"tune", "--from", dir + "/../output_inputs/rows.jsonl", "-o", rows},
                     "is also an input");
  CHECK(read_file(rows) == before);
  CHECK(names_in(dir) == std::set<std::string>{"rows.jsonl", "hard.jsonl"});  // no temporary file

  const std::string matrix = write(dir + "/matrix.json", "[[0, 1024], [2048, 0]]\n");
  expect_input_error({"run", "--topology", "switch:2", "--collective", "alltoallv", "--algorithm", "direct",
                      "--traffic-matrix", matrix, "--trace", matrix},
                     "trace '" + matrix + "' is also an input (traffic matrix");
  CHECK(read_file(matrix) == "[[0, 1024], [2048, 0]]\n");

  const std::string spec = R"({"topologies": ["switch:4"], "collectives": ["allreduce"], "sizes": [1024]})";
  const std::string sweep_file = write(dir + "/sweep.json", spec);
  expect_input_error({"sweep", "--file", sweep_file, "--out", sweep_file}, "is also an input (sweep file");
  expect_input_error({"sweep", "--file", sweep_file, "--timing", sweep_file}, "is also an input (sweep file");
  CHECK(read_file(sweep_file) == spec);

  const std::string log =
      write(dir + "/nvl72.log",
            read_file(std::string(ULTRASIM_SOURCE_DIR) + "/test/data/calibrate/gb200_nvl72_coreweave.log"));
  const std::string stack =
      write(dir + "/stack.json", R"({"name": "s", "description": "d", "protocols": [{"name":
      "p", "launch_latency": "7us", "step_latency": "2us", "network_step_latency": "0us", "efficiency": 0.8, "source": "test"}]})");
  const std::string log_bytes = read_file(log), stack_bytes = read_file(stack);
  expect_input_error({"calibrate", "--topology", "nvl72", "--from", log, "-o", log},
                     "stack file '" + log + "' is also an input (measured log");
  expect_input_error({"calibrate", "--topology", "nvl72", "--from", log, "--stack", stack, "-o", stack},
                     "stack file '" + stack + "' is also an input (stack file '" + stack + "')");
  CHECK(read_file(log) == log_bytes);
  CHECK(read_file(stack) == stack_bytes);

  // The standard output's file, as an output too.
  const std::string shared = write(dir + "/shared.txt", "");
  CliResult r = run_cli_to({"topology", "switch:4", "-o", shared}, shared);
  CHECK(r.status == 2);
  expect_one_error_line(r, "output '" + shared + "' is also the standard output");
}

TEST_CASE("output: two outputs of one run on one path are refused, the file left as it was") {
  const std::string dir = directory("output_twice");
  const std::string x = write(dir + "/x", "previous\n");
  const std::string same_x = dir + "/./x";
  for (const auto& [args, fragment] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {run_args({"--trace", x, "--link-stats", x}),
            "link statistics '" + x + "' is also the path of the trace"},
           {run_args({"--trace", x, "--flows", x}), "flow records '" + x + "' is also the path of the trace"},
           {run_args({"--flows", x, "--link-stats", same_x}),
            "link statistics '" + same_x + "' is also the path of the flow records ('" + x + "')"},
           {sized_sweep_args("1KiB", {"--out", x, "--timing", x}),
            "--timing file '" + x + "' is also the path of"},
           {{"moe", "--topology", "switch:4", "--experts", "8", "--top-k", "2", "--tokens-per-chip", "64",
             "--hidden", "256", "--trace", x, "--traffic-out", x},
            "traffic matrix '" + x + "' is also the path of the trace"}}) {
    expect_input_error(args, fragment);
    CHECK(read_file(x) == "previous\n");
    CHECK(names_in(dir) == std::set<std::string>{"x"});  // no temporary file left
  }
  // Two outputs on a path that does not exist yet: refused all the same, and nothing created.
  const std::string fresh = dir + "/fresh.json";
  expect_input_error(run_args({"--trace", fresh, "--flows", fresh}), "is also the path of the trace");
  CHECK(names_in(dir) == std::set<std::string>{"x"});
}

TEST_CASE("output: a sweep's --out held by another writer is refused, its rows untouched") {
  const std::string out = temp_path("locked.jsonl");
  const std::string rows = "{\"point\": 0}\n";
  write(out, rows);
  {  // this process holds the lock, as a running sweep does
    const int fd = open(out.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    REQUIRE(flock(fd, LOCK_EX | LOCK_NB) == 0);
    for (const auto& extra :
         {std::vector<std::string>{"--out", out}, std::vector<std::string>{"--out", out, "--resume"}}) {
      expect_input_error(sized_sweep_args("1KiB", extra),
                         "--out file '" + out + "' is being written by another");
      CHECK(read_file(out) == rows);
    }
    // Every other output on that path is refused too, before it runs: none replaces the rows under it.
    for (const auto& [args, fragment] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {run_args({"--trace", out}), "trace '" + out + "' is being written by another ultrasim process"},
             {run_args({"--flows", out}), "flow records '" + out + "' is being written by another"},
             {sized_sweep_args("1KiB", {"--timing", out}),
              "--timing file '" + out + "' is being written by another"}}) {
      expect_input_error(args, fragment);
      CHECK(read_file(out) == rows);
    }
    close(fd);
  }

  // A running sweep holds it: a second sweep on the same --out is refused while the first completes.
  const std::string sizes = "1KiB:512KiB:x2";  // 10 points, one at a time
  std::vector<std::string> args{ULTRASIM_BINARY};
  for (const auto& a : sized_sweep_args(sizes, {"--out", out, "--jobs", "1"})) args.push_back(a);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t first = fork();
  REQUIRE(first >= 0);
  if (first == 0) {
    const int null = open("/dev/null", O_RDWR);
    dup2(null, 0), dup2(null, 1), dup2(null, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  bool held = false;  // seen locked by the first sweep
  int status = 0;
  for (auto start = std::chrono::steady_clock::now();
       !held && std::chrono::steady_clock::now() - start < std::chrono::seconds(20);) {
    if (waitpid(first, &status, WNOHANG) == first) break;
    held = flock_held(out);  // looked up, not tried: trying would take the lock from the sweep a moment
    if (!held) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(held);
  CliResult second = run_cli(sized_sweep_args("1KiB", {"--out", out}));
  CHECK(second.status == 2);
  CHECK_THAT(second.err, Catch::Contains("is being written by another ultrasim process"));
  REQUIRE(waitpid(first, &status, 0) == first);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  const auto finished = read_json_lines(out);  // the first sweep's rows, all of them, sorted
  REQUIRE(finished.size() == 10);
  for (std::size_t i = 0; i < finished.size(); ++i) {
    CHECK(finished[i]["point"] == i);
    CHECK(finished[i]["bytes"] == (1024u << i));
    CHECK(finished[i]["status"] == "ok");
  }
}

TEST_CASE("output: a failed write, to the standard output or to an output file, exits 2 with one line") {
  // The standard output on a full disk: every command's result.
  for (const auto& args :
       {run_args({"--format", "json"}), run_args({}),
        std::vector<std::string>{"topology", "switch:4", "--format", "json"},
        std::vector<std::string>{"tune", "--from", kRows}, std::vector<std::string>{"list", "topologies"},
        sized_sweep_args("1KiB,2KiB", {}), std::vector<std::string>{"run", "--help"},
        std::vector<std::string>{"--version"}}) {
    INFO(nlohmann::json(args).dump());
    CliResult r = run_cli_to(args, "/dev/full");
    CHECK(r.status == 2);
    expect_one_error_line(r, "cannot write the standard output");
  }

  // An output file past the limit (as a full disk): the run fails, the previous file is kept whole and
  // no temporary file is left beside it.
  const std::string dir = directory("output_full");
  const std::string trace = write(dir + "/trace.json", "previous trace\n");
  const std::string links = write(dir + "/links.csv", "previous links\n");
  const std::string stack = write(dir + "/stack.json", "previous stack\n");
  for (const auto& [args, fragment] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {run_args({"--trace", trace}), "cannot write trace '" + trace + "': File too large"},
           {run_args({"--link-stats", links}),
            "cannot write link statistics '" + links + "': File too large"},
           {{"topology", "switch:4", "--format", "json", "-o", stack},
            "cannot write output '" + stack + "': File too large"}}) {
    INFO(nlohmann::json(args).dump());
    CliResult r = run_cli_to(args, "/dev/null", 512);
    CHECK(r.status == 2);
    expect_one_error_line(r, fragment);
    CHECK(read_file(trace) == "previous trace\n");
    CHECK(read_file(links) == "previous links\n");
    CHECK(read_file(stack) == "previous stack\n");
    CHECK(names_in(dir) == std::set<std::string>{"trace.json", "links.csv", "stack.json"});
  }
}

TEST_CASE("output: a run replaces its outputs whole, keeps their permissions and leaves no temporary file") {
  const std::string dir = directory("output_replace");
  const std::string trace = write(dir + "/trace.json", "previous\n");
  REQUIRE(chmod(trace.c_str(), 0640) == 0);
  const std::string flows = dir + "/flows.jsonl.gz", links = dir + "/links.csv";
  CliResult r = run_cli(run_args({"--trace", trace, "--flows", flows, "--link-stats", links}));
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(names_in(dir) == std::set<std::string>{"trace.json", "flows.jsonl.gz", "links.csv"});
  const auto events = nlohmann::json::parse(read_file(trace));
  CHECK(events["traceEvents"].size() > 10);
  struct stat info {};
  REQUIRE(stat(trace.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0640);
  const std::string gz = read_file(flows);
  REQUIRE(gz.size() > 2);
  CHECK(static_cast<unsigned char>(gz[0]) == 0x1f);
  CHECK(static_cast<unsigned char>(gz[1]) == 0x8b);
  CHECK(read_file(links).rfind("link,", 0) == 0);

  // A sweep's --out: resumed, sorted at the end; nothing else left in its directory.
  const std::string sweep_dir = directory("output_sweep");
  const std::string out = sweep_dir + "/rows.jsonl";
  r = run_cli(sized_sweep_args("1KiB,2KiB,4KiB", {"--out", out, "--jobs", "2"}));
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(names_in(sweep_dir) == std::set<std::string>{"rows.jsonl"});
  auto rows = read_json_lines(out);
  REQUIRE(rows.size() == 3);
  for (std::size_t i = 0; i < rows.size(); ++i) CHECK(rows[i]["point"] == i);
}

TEST_CASE("output: a sweep whose --out fills up stops with one error line, and --resume completes it") {
  // The limit: the file holds two rows but not three, while each point's own output (its JSON on the
  // standard output, to a file the sweep reads) still fits.
  const std::string sizes = "1KiB:32KiB:x2";  // 6 points
  const std::string reference = temp_path("full_reference.jsonl");
  CliResult r = run_cli(sized_sweep_args(sizes, {"--out", reference}));
  REQUIRE(r.status == 0);
  std::size_t row = 0;
  for (const auto& line : read_json_lines(reference)) row = std::max(row, line.dump().size() + 1);
  std::size_t point = 0;
  for (const std::string size : {"1024", "32768"})
    point = std::max(point, run_cli({"run", "--topology", "switch:4", "--collective", "allreduce",
                                     "--algorithm", "ring", "--size", size, "--format", "json"})
                                .out.size());
  const std::size_t low = std::max(point, 2 * row + 256), high = 3 * row - 256;
  REQUIRE(low < high);
  const long limit = static_cast<long>((low + high) / 2);

  const std::string out = temp_path("full.jsonl");
  r = run_cli_to(sized_sweep_args(sizes, {"--out", out, "--jobs", "1"}), "/dev/null", limit);
  CHECK(r.status == 2);
  expect_one_error_line(r, "cannot write --out file '" + out + "': File too large");
  CHECK(read_file(out).size() <= static_cast<std::size_t>(limit));

  r = run_cli(sized_sweep_args(sizes, {"--out", out, "--resume"}));
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(read_file(out) == read_file(reference));  // every point once, as if never stopped
}
