// Checkpoint files: atomic saves (temporary, fsync, rename, fsync the directory) and
// read-only loads.
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "volta/model/checkpoint.h"

namespace volta {
namespace {

[[noreturn]] void refuse_io(const std::string& what, const std::filesystem::path& path, int error) {
  throw CheckpointError("CK-IO", what + " " + path.string() + ": " + std::strerror(error));
}

// Removes the temporary unless the rename consumed it, whatever path out of save is taken.
class TemporaryFile {
 public:
  explicit TemporaryFile(std::filesystem::path path) : path_(std::move(path)) {}
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!renamed_) ::unlink(path_.c_str());
  }
  const std::filesystem::path& path() const { return path_; }
  int fd_ = -1;
  bool renamed_ = false;

 private:
  std::filesystem::path path_;
};

std::filesystem::path temporary_beside(const std::filesystem::path& path) {
  static std::atomic<uint64_t> counter{0};
  std::string name = "." + path.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" +
                     std::to_string(counter.fetch_add(1));
  return path.parent_path() / name;
}

void write_all(int fd, std::string_view bytes, const std::filesystem::path& path) {
  while (!bytes.empty()) {
    ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      refuse_io("cannot write", path, errno);
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
}

}  // namespace

void save_checkpoint(const Checkpoint& checkpoint, const std::filesystem::path& path,
                     const CheckpointSaveOptions& options) {
  std::string bytes = serialize_checkpoint(checkpoint);  // refuses a bad state before any I/O
  TemporaryFile temporary(temporary_beside(path));
  temporary.fd_ = ::open(temporary.path().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (temporary.fd_ < 0) {
    temporary.renamed_ = true;  // nothing was created, nothing to remove
    refuse_io("cannot create", temporary.path(), errno);
  }
  write_all(temporary.fd_, bytes, temporary.path());
  if (::fsync(temporary.fd_) != 0) refuse_io("cannot fsync", temporary.path(), errno);
  int fd = temporary.fd_;
  temporary.fd_ = -1;
  if (::close(fd) != 0) refuse_io("cannot close", temporary.path(), errno);
  if (options.before_rename) options.before_rename(temporary.path());
  if (::rename(temporary.path().c_str(), path.c_str()) != 0) {
    refuse_io("cannot rename a temporary over", path, errno);
  }
  temporary.renamed_ = true;
  // The rename is durable only once the directory entry is on disk.
  std::filesystem::path directory = path.parent_path().empty() ? "." : path.parent_path();
  int directory_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd < 0) refuse_io("cannot open directory", directory, errno);
  int sync_result = ::fsync(directory_fd);
  int sync_error = errno;
  ::close(directory_fd);
  if (sync_result != 0) refuse_io("cannot fsync directory", directory, sync_error);
}

LoadedCheckpoint load_checkpoint(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) refuse_io("cannot open", path, errno);
  std::string bytes;
  std::array<char, 1 << 16> chunk{};
  while (true) {
    ssize_t got = ::read(fd, chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int error = errno;
      ::close(fd);
      refuse_io("cannot read", path, error);
    }
    if (got == 0) break;
    bytes.append(chunk.data(), static_cast<size_t>(got));
  }
  ::close(fd);
  return parse_checkpoint(bytes);
}

}  // namespace volta
