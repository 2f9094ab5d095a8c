// Writes a file through a temporary sibling and a rename, so readers never see half a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace wc {

// Writes `size` bytes to `path` atomically (temporary file in the same folder, fsync, rename).
// Throws wc::Error naming the path on failure; the target is untouched then.
void write_file_atomically(const std::string& path, const void* data, size_t size);
inline void write_file_atomically(const std::string& path, const std::string& text) {
  write_file_atomically(path, text.data(), text.size());
}

}  // namespace wc
