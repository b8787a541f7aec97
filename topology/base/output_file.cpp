#include "topology/base/output_file.hpp"

#include <zlib.h>

#include <fstream>

#include "topology/base/errors.hpp"

namespace ultrasim {

struct OutputFile::Impl {
  std::string path, what;
  std::ofstream plain;
  gzFile gz = nullptr;
  bool failed = false;
};

bool OutputFile::gzipped(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

OutputFile::OutputFile(const std::string& path, const std::string& what) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->what = what;
  if (gzipped(path)) {
    impl_->gz = gzopen(path.c_str(), "wb6");
    if (impl_->gz == nullptr) throw InputError("cannot write " + what + " '" + path + "'");
    gzbuffer(impl_->gz, 1 << 18);
  } else {
    impl_->plain.open(path, std::ios::binary | std::ios::trunc);
    if (!impl_->plain) throw InputError("cannot write " + what + " '" + path + "'");
  }
}

OutputFile::~OutputFile() {
  try {
    if (impl_) {
      if (impl_->gz != nullptr) gzclose(impl_->gz);
      impl_->gz = nullptr;
    }
  } catch (...) {
  }
}

OutputFile& OutputFile::operator<<(std::string_view text) {
  if (text.empty()) return *this;
  if (impl_->gz != nullptr) {
    if (gzwrite(impl_->gz, text.data(), static_cast<unsigned>(text.size())) == 0) impl_->failed = true;
  } else {
    impl_->plain.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  return *this;
}

void OutputFile::close() {
  bool ok = !impl_->failed;
  if (impl_->gz != nullptr) {
    ok = gzclose(impl_->gz) == Z_OK && ok;
    impl_->gz = nullptr;
  } else {
    impl_->plain.close();
    ok = ok && !impl_->plain.fail();
  }
  if (!ok) throw InputError("cannot write " + impl_->what + " '" + impl_->path + "' (disk full?)");
}

std::unique_ptr<std::ofstream> open_output(const std::string& path, const char* what) {
  auto file = std::make_unique<std::ofstream>(path, std::ios::binary | std::ios::trunc);
  if (!*file) throw InputError(std::string("cannot write ") + what + " '" + path + "'");
  return file;
}

}  // namespace ultrasim
