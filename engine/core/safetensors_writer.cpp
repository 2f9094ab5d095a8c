// Writing safetensors files: a deterministic layout, streamed to disk through a temporary file
// that is renamed into place only when complete.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "engine/core/error.h"
#include "engine/core/safetensors.h"
#include "engine/core/safetensors_internal.h"

namespace wc {
namespace {

// The header bytes (length prefix included) and the order in which tensor data follows it.
struct Layout {
  std::string header;
  std::vector<const TensorView*> order;
  uint64_t data_size = 0;
};

Layout plan_layout(const std::vector<TensorView>& tensors, const Metadata& metadata,
                   const std::string& file) {
  Layout layout;
  std::set<std::string_view> names;
  for (const TensorView& tensor : tensors) {
    const std::string where = file + ": tensor " + quoted_name(tensor.name);
    if (tensor.name.empty() || tensor.name == "__metadata__") {
      throw Error(where, "is not a usable tensor name");
    }
    if (!names.insert(tensor.name).second) throw Error(where, "is given twice");
    const auto numel = shape_numel(tensor.shape);
    uint64_t bytes = 0;
    if (!numel || __builtin_mul_overflow(static_cast<uint64_t>(*numel),
                                         static_cast<uint64_t>(dtype_size(tensor.dtype)), &bytes)) {
      throw Error(where, "invalid shape " + shape_to_string(tensor.shape));
    }
    if (bytes != tensor.byte_size) {
      throw Error(where, "has " + std::to_string(tensor.byte_size) + " bytes but shape " +
                             shape_to_string(tensor.shape) + " of " +
                             std::string(dtype_name(tensor.dtype)) + " needs " +
                             std::to_string(bytes));
    }
    if (bytes > 0 && tensor.data == nullptr) throw Error(where, "has no data");
    layout.order.push_back(&tensor);
  }
  // Largest element size first, then by name (as the reference writer does): every tensor then
  // starts at a multiple of its element size, so readers of the mmap get aligned pointers.
  std::sort(layout.order.begin(), layout.order.end(), [](const TensorView* a, const TensorView* b) {
    const size_t size_a = dtype_size(a->dtype), size_b = dtype_size(b->dtype);
    return size_a != size_b ? size_a > size_b : a->name < b->name;
  });

  nlohmann::json header = nlohmann::json::object();  // std::map: keys come out sorted
  if (!metadata.empty()) header["__metadata__"] = metadata;
  for (const TensorView* tensor : layout.order) {
    header[tensor->name] = {
        {"dtype", dtype_name(tensor->dtype)},
        {"shape", tensor->shape},
        {"data_offsets", {layout.data_size, layout.data_size + tensor->byte_size}}};
    layout.data_size += tensor->byte_size;
  }
  std::string json = header.dump();
  // Pad with spaces (valid JSON whitespace) so the data section starts 8-byte aligned.
  json.append((8 - json.size() % 8) % 8, ' ');
  layout.header.resize(8);
  uint64_t length = json.size();
  for (int i = 0; i < 8; ++i) layout.header[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  layout.header += json;
  return layout;
}

// A file written under a temporary name and renamed over `path` by commit(); destroyed without
// commit() it removes the temporary, so a failed write leaves the old file untouched.
class TemporaryFile {
 public:
  explicit TemporaryFile(std::string path) : path_(std::move(path)) {
    std::random_device entropy;
    temp_ = path_ + ".tmp" + std::to_string(entropy() % 1000000);
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw Error(path_, std::string("cannot create temporary file: ") + std::strerror(errno));
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temp_.c_str());
  }

  void write(const void* data, size_t size) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd_, bytes, size);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error(path_, std::string("write failed: ") + std::strerror(errno));
      bytes += n;
      size -= static_cast<size_t>(n);
    }
  }

  void commit() {
    const bool synced = ::fsync(fd_) == 0;
    const bool closed = ::close(fd_) == 0;
    fd_ = -1;
    if (!synced || !closed)
      throw Error(path_, std::string("flush failed: ") + std::strerror(errno));
    if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
      throw Error(path_, std::string("rename failed: ") + std::strerror(errno));
    }
    committed_ = true;
  }

 private:
  std::string path_;
  std::string temp_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

std::vector<uint8_t> serialize_safetensors(const std::vector<TensorView>& tensors,
                                           const Metadata& metadata, const std::string& file) {
  const Layout layout = plan_layout(tensors, metadata, file);
  std::vector<uint8_t> bytes(layout.header.begin(), layout.header.end());
  bytes.reserve(bytes.size() + layout.data_size);
  for (const TensorView* tensor : layout.order) {
    bytes.insert(bytes.end(), tensor->data, tensor->data + tensor->byte_size);
  }
  return bytes;
}

void write_safetensors(const std::string& path, const std::vector<TensorView>& tensors,
                       const Metadata& metadata) {
  const Layout layout = plan_layout(tensors, metadata, path);
  TemporaryFile out(path);
  out.write(layout.header.data(), layout.header.size());
  for (const TensorView* tensor : layout.order) out.write(tensor->data, tensor->byte_size);
  out.commit();
}

}  // namespace wc
