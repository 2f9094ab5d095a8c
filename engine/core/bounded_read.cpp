// See bounded_read.h.
#include "engine/core/bounded_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/core/error.h"

namespace wc {

std::string read_bounded_file(const std::string& path, int64_t max_bytes, const std::string& kind) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(path, "cannot open the " + kind + ": " + std::strerror(errno));
  std::string text;
  try {
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
      throw Error(path, "the " + kind + " must be a regular file");
    }
    if (info.st_size > max_bytes) {
      throw Error(path, "a " + kind + " of " + std::to_string(info.st_size) +
                            " bytes, more than the " + std::to_string(max_bytes) + " allowed");
    }
    text.resize(static_cast<size_t>(info.st_size));
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw Error(path, "the " + kind + " changed or became unreadable while read");
      done += static_cast<size_t>(n);
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return text;
}

}  // namespace wc
