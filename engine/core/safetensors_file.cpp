// Opening safetensors files: memory-mapped when possible, read into memory otherwise.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/core/error.h"
#include "engine/core/safetensors.h"
#include "engine/core/safetensors_internal.h"

namespace wc {

// Either an mmap of the whole file or a heap copy; never moves, so views into it stay valid when
// the SafetensorsFile that owns it is moved.
struct SafetensorsFile::Storage {
  const uint8_t* mapped = nullptr;
  size_t mapped_size = 0;
  std::vector<uint8_t> bytes;

  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() {
    if (mapped != nullptr) ::munmap(const_cast<uint8_t*>(mapped), mapped_size);
  }
  const uint8_t* data() const { return mapped != nullptr ? mapped : bytes.data(); }
  size_t size() const { return mapped != nullptr ? mapped_size : bytes.size(); }
};

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

// Reads the whole file when mmap is unavailable (some network or FUSE file systems).
std::vector<uint8_t> read_whole(int fd, size_t size, const std::string& path) {
  std::vector<uint8_t> bytes(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, bytes.data() + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(path, "read failed: " + errno_text());
    if (n == 0) throw Error(path, "file shrank while being read");
    done += static_cast<size_t>(n);
  }
  return bytes;
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

SafetensorsFile::SafetensorsFile(std::string path, std::unique_ptr<Storage> storage)
    : path_(std::move(path)), storage_(std::move(storage)) {
  contents_ = parse_safetensors(storage_->data(), storage_->size(), path_);
}
SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;
SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&&) noexcept = default;
SafetensorsFile::~SafetensorsFile() = default;

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO someone passed by mistake must fail below, not wait for a writer.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) throw Error(path, "cannot open: " + errno_text());
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) throw Error(path, "cannot stat: " + errno_text());
  if (!S_ISREG(info.st_mode)) throw Error(path, "not a regular file");
  const auto size = static_cast<size_t>(info.st_size);

  auto storage = std::make_unique<Storage>();
  if (size > 0) {
    // MAP_PRIVATE + PROT_READ: the weights are never written through the map. If another process
    // truncates the file while it is mapped, reads fault; checkpoints are written by rename
    // (see write_safetensors), which leaves the mapped inode intact.
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (map != MAP_FAILED) {
      storage->mapped = static_cast<const uint8_t*>(map);
      storage->mapped_size = size;
    } else {
      storage->bytes = read_whole(fd.get(), size, path);
    }
  }
  return SafetensorsFile(path, std::move(storage));
}

SafetensorsFile SafetensorsFile::from_bytes(std::vector<uint8_t> bytes, const std::string& name) {
  auto storage = std::make_unique<Storage>();
  storage->bytes = std::move(bytes);
  return SafetensorsFile(name, std::move(storage));
}

size_t SafetensorsFile::file_size() const {
  return storage_->size();
}
bool SafetensorsFile::memory_mapped() const {
  return storage_->mapped != nullptr;
}

const TensorView* SafetensorsFile::find(std::string_view name) const {
  for (const TensorView& tensor : contents_.tensors) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

const TensorView& SafetensorsFile::at(std::string_view name) const {
  const TensorView* tensor = find(name);
  if (tensor == nullptr) throw Error(path_, "no tensor " + quoted_name(name));
  return *tensor;
}

}  // namespace wc
