// Local files and in-memory files behind the ByteSource interface (vramfit/source.h). Local
// reads are pread calls at offsets, on a descriptor opened per read without blocking (a FIFO
// named like a shard is refused, never waited on); sizes come from stat, so a sparse (hollow)
// checkpoint costs what its headers cost.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sources/path_error.h"
#include "vramfit/source.h"

namespace vramfit {
namespace fs = std::filesystem;

std::string LocalPathError(int err) {
  if (err == ELOOP) return "symlink loop (too many levels of symbolic links, ELOOP)";
  return std::strerror(err);
}

namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

class LocalDirectory : public ByteSource {
 public:
  explicit LocalDirectory(std::string dir) : dir_(std::move(dir)) {}

  std::string Label() const override { return dir_; }
  std::string Where(std::string_view file) const override {
    return (fs::path(dir_) / std::string(file)).string();
  }

  Result<std::vector<std::string>> List() const override {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      std::error_code tec;
      if (it->is_directory(tec)) name += '/';
      out.push_back(std::move(name));
    }
    if (ec) return Status::Io(fmt::format("{}: cannot list: {}", dir_, ec.message()));
    std::sort(out.begin(), out.end());
    return out;
  }

  Result<uint64_t> Size(std::string_view file) const override {
    const std::string path = Where(file);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      const int err = errno;
      const std::string msg = fmt::format("{}: cannot open: {}", path, LocalPathError(err));
      return err == ENOENT || err == ENOTDIR ? Status::NotFound(msg) : Status::Io(msg);
    }
    if (!S_ISREG(st.st_mode)) {
      return Status::InvalidArgument(fmt::format("{}: not a regular file", path));
    }
    return static_cast<uint64_t>(st.st_size);
  }

  Status ReadAt(std::string_view file, uint64_t offset, size_t n, char* out) const override {
    const std::string path = Where(file);
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (fd.get() < 0) {
      const int err = errno;
      const std::string msg = fmt::format("{}: cannot open: {}", path, LocalPathError(err));
      return err == ENOENT || err == ENOTDIR ? Status::NotFound(msg) : Status::Io(msg);
    }
    struct stat st;
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return Status::InvalidArgument(fmt::format("{}: not a regular file", path));
    }
    size_t done = 0;
    while (done < n) {
      const ssize_t r =
          ::pread(fd.get(), out + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        return Status::Io(fmt::format("{}: read failed at byte {}: {}", path, offset + done,
                                      std::strerror(errno)));
      }
      if (r == 0) {
        return Status::Corrupt(
            fmt::format("{}: file ended at byte {} while reading {} bytes at {}", path,
                        offset + done, n, offset));
      }
      done += static_cast<size_t>(r);
    }
    return Status::Ok();
  }

 private:
  std::string dir_;
};

class Memory : public ByteSource {
 public:
  Memory(std::string label, std::map<std::string, std::string> files)
      : label_(std::move(label)), files_(std::move(files)) {}

  std::string Label() const override { return label_; }
  std::string Where(std::string_view file) const override {
    return fmt::format("{}/{}", label_, file);
  }
  Result<std::vector<std::string>> List() const override {
    std::vector<std::string> out;
    for (const auto& [name, bytes] : files_) out.push_back(name);
    return out;  // std::map: already sorted
  }
  Result<uint64_t> Size(std::string_view file) const override {
    auto it = files_.find(std::string(file));
    if (it == files_.end()) {
      return Status::NotFound(fmt::format("{}: no such file", Where(file)));
    }
    return static_cast<uint64_t>(it->second.size());
  }
  Status ReadAt(std::string_view file, uint64_t offset, size_t n, char* out) const override {
    auto it = files_.find(std::string(file));
    if (it == files_.end()) return Status::NotFound(fmt::format("{}: no such file", Where(file)));
    const std::string& b = it->second;
    if (offset > b.size() || n > b.size() - offset) {
      return Status::Corrupt(
          fmt::format("{}: file ended at byte {} while reading {} bytes at {}", Where(file),
                      b.size(), n, offset));
    }
    std::copy_n(b.data() + offset, n, out);
    return Status::Ok();
  }

 private:
  std::string label_;
  std::map<std::string, std::string> files_;
};

}  // namespace

Result<std::unique_ptr<ByteSource>> OpenLocalDirectory(std::string_view dir) {
  const std::string d = dir.empty() ? "." : std::string(dir);
  std::error_code ec;
  const fs::file_status st = fs::status(d, ec);
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
    return Status::Io(fmt::format("{}: {}", d, LocalPathError(ec.value())));
  }
  if (!fs::exists(st)) {
    return Status::NotFound(fmt::format("{}: no such file or directory", d));
  }
  if (!fs::is_directory(st)) {
    return Status::InvalidArgument(fmt::format("{}: not a directory", d));
  }
  return std::unique_ptr<ByteSource>(std::make_unique<LocalDirectory>(d));
}

std::unique_ptr<ByteSource> MemorySource(std::string label,
                                         std::map<std::string, std::string> files) {
  return std::make_unique<Memory>(std::move(label), std::move(files));
}

}  // namespace vramfit
