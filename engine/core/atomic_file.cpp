// See atomic_file.h.
#include "engine/core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "engine/core/error.h"

namespace wc {

void write_file_atomically(const std::string& path, const void* data, size_t size) {
  std::random_device entropy;
  const std::string temp = path + ".tmp" + std::to_string(entropy() % 1000000);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(path, std::string("cannot create temporary file: ") + std::strerror(errno));
  const auto* bytes = static_cast<const uint8_t*>(data);
  size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(fd, bytes + written, size - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string reason = std::strerror(errno);
      ::close(fd);
      ::unlink(temp.c_str());
      throw Error(path, "write failed: " + reason);
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temp.c_str());
    throw Error(path, "flush failed: " + reason);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temp.c_str());
    throw Error(path, "rename failed: " + reason);
  }
}

}  // namespace wc
