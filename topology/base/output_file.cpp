#include "topology/base/output_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"

namespace ultrasim {
namespace {

namespace fs = std::filesystem;

// An output path this process has claimed: its absolute, symlink-resolved form, and its identity when
// the file existed.
struct Claim {
  std::string canonical, what, path;
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
};

std::vector<Claim>& claims() {
  static std::vector<Claim> all;
  return all;
}

std::string named(const std::string& what, const std::string& path) {
  return what + " '" + path + "'";
}

InputError cannot_write(const std::string& what, const std::string& path, int error) {
  return InputError("cannot write " + named(what, path) + ": " +
                    (error != 0 ? std::strerror(error) : "write failed (disk full?)"));
}

const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

bool same_file(const struct stat& a, dev_t device, ino_t inode) {
  return a.st_dev == device && a.st_ino == inode;
}

// Refuses an existing regular file that is an input of this process (read by check_input_file, or its
// standard input) or its standard output.
void check_not_input(const std::string& what, const std::string& path, const struct stat& target) {
  for (const InputSeen& input : inputs_seen())
    if (target.st_dev == input.device && target.st_ino == input.inode)
      throw InputError(named(what, path) + " is also an input (" + input.name +
                       "); write the output to another file");
  struct stat fd {};
  if (::fstat(0, &fd) == 0 && S_ISREG(fd.st_mode) && same_file(target, fd.st_dev, fd.st_ino))
    throw InputError(named(what, path) + " is also the standard input; write the output to another file");
  if (::fstat(1, &fd) == 0 && S_ISREG(fd.st_mode) && same_file(target, fd.st_dev, fd.st_ino))
    throw InputError(named(what, path) + " is also the standard output; write the output to another file");
}

// Checks `path` against the rules of output_file.hpp and claims it; returns true for /dev/null (written
// directly, never claimed). Sets `existing` (and returns through `exists`) when the target exists.
// Whether some process holds a flock on the file `existing` describes (a running sweep's --out): looked
// up in /proc/locks, not tried, since a lock taken to try it would fail the sweep's own for a moment.
bool flock_held(const struct stat& existing) {
  char device[64];
  std::snprintf(device, sizeof device, "%02x:%02x:%llu", major(existing.st_dev), minor(existing.st_dev),
                static_cast<unsigned long long>(existing.st_ino));
  std::ifstream locks("/proc/locks");
  for (std::string line; std::getline(locks, line);) {
    std::istringstream words(line);
    std::string number, kind, mode, access, pid, file;
    words >> number >> kind >> mode >> access >> pid >> file;
    if (kind == "FLOCK" && file == device) return true;
  }
  return false;
}

bool claim_output(const std::string& path, const std::string& what, bool allow_null, struct stat& existing,
                  bool& exists) {
  exists = ::lstat(path.c_str(), &existing) == 0;
  if (exists) {
    if (allow_null && path == "/dev/null" && S_ISCHR(existing.st_mode)) return true;
    if (!S_ISREG(existing.st_mode))
      throw InputError(named(what, path) + " is " + kind_of(existing.st_mode) +
                       (allow_null
                            ? "; an output must be a regular file (or /dev/null), which ultrasim replaces"
                            : "; an output must be a regular file (not /dev/null: it is locked, read back "
                              "and rewritten)"));
    check_not_input(what, path, existing);
  }
  Claim claim{path, what, path, exists, exists ? existing.st_dev : 0, exists ? existing.st_ino : 0};
  std::error_code error;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(path, error), error);
  if (!error) claim.canonical = canonical.string();
  for (const Claim& other : claims())
    if (other.canonical == claim.canonical ||
        (exists && other.exists && other.device == claim.device && other.inode == claim.inode))
      throw InputError(named(what, path) + " is also the path of the " + other.what + " ('" + other.path +
                       "'); give each output its own file");
  if (exists && flock_held(existing))  // after the claims: this process's own outputs say so first
    throw InputError(named(what, path) +
                     " is being written by another ultrasim process (a sweep holds its lock); wait for it "
                     "to finish or give another file");
  claims().push_back(claim);
  return false;
}

// Writes all of `text` to `fd`; returns 0 or the errno of the failure.
int write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t wrote = ::write(fd, data, size);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return wrote < 0 ? errno : ENOSPC;
    data += wrote, size -= static_cast<std::size_t>(wrote);
  }
  return 0;
}

// A new, exclusive file beside `target` (".NAME.ultrasim-PID-N.tmp" in its directory), opened for
// writing with `target`'s permission bits when it exists; returns its descriptor, or -1 with errno set.
int create_temporary(const std::string& target, const struct stat* existing, std::string& temp) {
  static unsigned counter = 0;
  const fs::path p(target);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp = (dir / ("." + p.filename().string() + ".ultrasim-" + std::to_string(::getpid()) + "-" +
                   std::to_string(counter++) + ".tmp"))
               .string();
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      if (existing != nullptr) (void)::fchmod(fd, existing->st_mode & 07777);
      return fd;
    }
    if (errno != EEXIST) break;
  }
  temp.clear();
  return -1;
}

}  // namespace

struct OutputFile::Impl {
  std::string path, what, temp;
  int fd = -1;
  gzFile gz = nullptr;
  std::string buffer;  // plain: written in blocks of kBlock
  int error = 0;       // the first failed write's errno (or ENOSPC)
  bool failed = false, null_device = false, done = false;
  pid_t owner = ::getpid();  // a forked child never removes its parent's temporary file

  static constexpr std::size_t kBlock = 1 << 18;
  void fail(int e) {
    if (!failed) error = e;
    failed = true;
  }
  void flush() {
    if (!failed && !buffer.empty())
      if (int e = write_all(fd, buffer.data(), buffer.size())) fail(e);
    buffer.clear();
  }
};

bool OutputFile::gzipped(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

OutputFile::OutputFile(const std::string& path, const std::string& what) : impl_(std::make_unique<Impl>()) {
  Impl& f = *impl_;
  f.path = path;
  f.what = what;
  struct stat existing {};
  bool exists = false;
  f.null_device = claim_output(path, what, true, existing, exists);
  f.fd = f.null_device ? ::open(path.c_str(), O_WRONLY | O_CLOEXEC)
                       : create_temporary(path, exists ? &existing : nullptr, f.temp);
  if (f.fd < 0) throw cannot_write(what, path, errno);
  if (gzipped(path)) {
    f.gz = gzdopen(f.fd, "wb6");
    if (f.gz == nullptr) {
      const int e = errno;
      ::close(f.fd);
      f.fd = -1;
      if (!f.temp.empty()) ::unlink(f.temp.c_str());
      throw cannot_write(what, path, e);
    }
    f.fd = -1;  // gz owns it
    gzbuffer(f.gz, 1 << 18);
  }
}

OutputFile::~OutputFile() {
  if (!impl_) return;
  Impl& f = *impl_;
  if (f.gz != nullptr) gzclose(f.gz);
  if (f.fd >= 0) ::close(f.fd);
  if (!f.done && !f.temp.empty() && ::getpid() == f.owner) ::unlink(f.temp.c_str());
}

OutputFile& OutputFile::operator<<(std::string_view text) {
  Impl& f = *impl_;
  if (text.empty() || f.failed || f.done) return *this;
  if (f.gz != nullptr) {
    errno = 0;
    if (gzwrite(f.gz, text.data(), static_cast<unsigned>(text.size())) == 0) f.fail(errno ? errno : ENOSPC);
  } else {
    f.buffer.append(text);
    if (f.buffer.size() >= Impl::kBlock) f.flush();
  }
  return *this;
}

void OutputFile::close() {
  Impl& f = *impl_;
  if (f.done) return;
  if (f.gz != nullptr) {
    errno = 0;
    if (gzclose(f.gz) != Z_OK) f.fail(errno ? errno : ENOSPC);
    f.gz = nullptr;
  } else {
    f.flush();
    if (::close(f.fd) != 0) f.fail(errno);
    f.fd = -1;
  }
  auto abandon = [&] {
    if (!f.temp.empty()) ::unlink(f.temp.c_str());
    f.done = true;
  };
  if (f.failed) {
    abandon();
    throw cannot_write(f.what, f.path, f.error);
  }
  if (f.null_device) {
    f.done = true;
    return;
  }
  struct stat now {};
  if (::lstat(f.path.c_str(), &now) == 0) {  // an input read since it was opened (--from, a stack file)
    try {
      if (!S_ISREG(now.st_mode))
        throw InputError(named(f.what, f.path) + " became " + kind_of(now.st_mode) + " while it was written");
      check_not_input(f.what, f.path, now);
    } catch (...) {
      abandon();
      throw;
    }
  }
  if (::rename(f.temp.c_str(), f.path.c_str()) != 0) {
    const int e = errno;
    abandon();
    throw cannot_write(f.what, f.path, e);
  }
  f.done = true;
}

struct AppendedFile::Impl {
  std::string path, what;
  int fd = -1;
  bool lock = false;
};

AppendedFile::AppendedFile(const std::string& path, const std::string& what, bool lock)
    : impl_(std::make_unique<Impl>()) {
  Impl& f = *impl_;
  f.path = path, f.what = what, f.lock = lock;
  struct stat existing {};
  bool exists = false;
  const bool null_device = claim_output(path, what, !lock, existing, exists);
  // Locked: the lock must be on the file the path names after it is taken (a sweep that held it may
  // have just renamed a new file over it), so it is checked and taken again if not.
  for (int attempt = 0; attempt < 20; ++attempt) {
    f.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
    if (f.fd < 0) throw cannot_write(what, path, errno);
    struct stat opened {};
    if (::fstat(f.fd, &opened) != 0 || (!S_ISREG(opened.st_mode) && !null_device)) {
      ::close(f.fd);
      f.fd = -1;
      throw InputError(named(what, path) + " is " + kind_of(opened.st_mode) +
                       "; an output must be a regular file (or /dev/null)");
    }
    if (!lock) return;
    if (::flock(f.fd, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      ::close(f.fd);
      f.fd = -1;
      if (e == EWOULDBLOCK)
        throw InputError(named(what, path) +
                         " is being written by another ultrasim process (a sweep holds its lock); wait "
                         "for it to finish or give another file");
      throw cannot_write(what, path, e);
    }
    struct stat named_now {};
    if (::stat(path.c_str(), &named_now) == 0 && same_file(named_now, opened.st_dev, opened.st_ino)) return;
    ::close(f.fd);
    f.fd = -1;
  }
  throw InputError(named(what, path) + " keeps being replaced by another process");
}

AppendedFile::~AppendedFile() {
  if (impl_ && impl_->fd >= 0) ::close(impl_->fd);
}

const std::string& AppendedFile::path() const {
  return impl_->path;
}

void AppendedFile::truncate() {
  if (::ftruncate(impl_->fd, 0) != 0 && errno != EINVAL) throw cannot_write(impl_->what, impl_->path, errno);
}

void AppendedFile::append(std::string_view text) {
  if (int e = write_all(impl_->fd, text.data(), text.size())) throw cannot_write(impl_->what, impl_->path, e);
}

void AppendedFile::replace(std::string_view text) {
  Impl& f = *impl_;
  struct stat existing {};
  const bool exists = ::fstat(f.fd, &existing) == 0;
  std::string temp;
  const int fd = create_temporary(f.path, exists ? &existing : nullptr, temp);
  if (fd < 0) throw cannot_write(f.what, f.path, errno);
  int e = 0;
  if (f.lock && ::flock(fd, LOCK_EX) != 0) e = errno;
  if (e == 0) e = write_all(fd, text.data(), text.size());
  if (e == 0 && ::fcntl(fd, F_SETFL, O_APPEND) != 0) e = errno;
  if (e == 0 && ::rename(temp.c_str(), f.path.c_str()) != 0) e = errno;
  if (e != 0) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw cannot_write(f.what, f.path, e);
  }
  ::close(f.fd);  // the old file and its lock; the path now names the new one, locked
  f.fd = fd;
}

std::string standard_output_error() {
  errno = 0;
  std::cout.flush();
  bool failed = !std::cout;
  int error = errno;
  if (std::fflush(stdout) != 0) failed = true, error = errno;
  if (std::ferror(stdout)) failed = true;
  if (!failed) return "";
  return std::string("cannot write the standard output: ") +
         (error != 0 ? std::strerror(error) : "write failed (disk full?)");
}

std::string printable_text(const std::string& text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    // The length of the well-formed UTF-8 sequence starting here (1 for ASCII), or 0.
    std::size_t length = byte < 0x80           ? 1
                         : (byte >> 5) == 0x6  ? 2
                         : (byte >> 4) == 0xe  ? 3
                         : (byte >> 3) == 0x1e ? 4
                                               : 0;
    if (i + length > text.size()) length = 0;
    for (std::size_t k = 1; k < length; ++k)
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) length = 0;
    const bool kept_control = keep_lines && (byte == '\n' || byte == '\t');
    if (length == 0 || ((byte < 0x20 || byte == 0x7f) && !kept_control)) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
      ++i;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  return out;
}

std::string temp_directory() {
  std::error_code error;
  const std::filesystem::path dir = std::filesystem::temp_directory_path(error);
  if (error) {
    const char* env = std::getenv("TMPDIR");
    throw InputError("the temporary directory $TMPDIR '" + std::string(env ? env : "") +
                     "' is not a directory; set TMPDIR to one, or unset it for /tmp");
  }
  return dir.string();
}

}  // namespace ultrasim
