// Reading, validating and writing safetensors files and sharded checkpoints, without LibTorch.
// Every input file is treated as hostile: see Note [Safetensors validation] in
// safetensors_header.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wc {

// Element types of the safetensors format that we read. Unknown names (F8_*, U16, ...) are
// rejected with an error naming the file and tensor.
enum class Dtype : uint8_t { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };

std::string_view dtype_name(Dtype dtype);  // "F32", "BF16", ...
size_t dtype_size(Dtype dtype);            // bytes per element
bool is_floating(Dtype dtype);
std::optional<Dtype> dtype_from_name(std::string_view name);

using Shape = std::vector<int64_t>;
using Metadata = std::map<std::string, std::string>;  // `__metadata__`: string -> string only

// Elements in `shape` (1 for a scalar), or nullopt when a dimension is negative or the product
// overflows int64.
std::optional<int64_t> shape_numel(const Shape& shape);
std::string shape_to_string(const Shape& shape);  // "[2, 3]"

// One tensor inside a file: a view, not an owner. `data` points into the file's bytes and may be
// unaligned (some writers emit unpadded headers), so read elements with memcpy.
struct TensorView {
  std::string name;
  Dtype dtype = Dtype::kF32;
  Shape shape;
  const uint8_t* data = nullptr;
  size_t byte_size = 0;
  std::string file;  // where it came from, for error messages ("" for tensors about to be written)

  int64_t numel() const;
};

// The validated contents of one safetensors buffer: tensors in file-offset order.
struct SafetensorsContents {
  std::vector<TensorView> tensors;
  Metadata metadata;
  size_t header_size = 0;  // N, the JSON length (the data starts at 8 + N)
};

// Parses and validates safetensors bytes in memory. The views point into `bytes`, which must
// outlive them. `file` names the source in errors. Throws wc::Error naming file and tensor/field.
SafetensorsContents parse_safetensors(const uint8_t* bytes, size_t size, const std::string& file);

// A safetensors file opened for reading: memory-mapped (or read whole if mmap fails). Views stay
// valid while the object (or anything it was moved into) lives.
class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::string& path);
  // Takes ownership of bytes already in memory (tests, files from elsewhere).
  static SafetensorsFile from_bytes(std::vector<uint8_t> bytes, const std::string& name);

  SafetensorsFile(SafetensorsFile&&) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept;
  ~SafetensorsFile();

  const std::string& path() const { return path_; }
  const std::vector<TensorView>& tensors() const { return contents_.tensors; }
  const Metadata& metadata() const { return contents_.metadata; }
  size_t file_size() const;
  bool memory_mapped() const;

  const TensorView* find(std::string_view name) const;  // nullptr when absent
  const TensorView& at(std::string_view name) const;    // throws naming file and tensor

 private:
  struct Storage;
  SafetensorsFile(std::string path, std::unique_ptr<Storage> storage);

  std::string path_;
  std::unique_ptr<Storage> storage_;
  SafetensorsContents contents_;
};

// Serializes tensors into safetensors bytes: header keys sorted, data ordered by element size
// (largest first) then name, so every tensor is naturally aligned once the header is padded
// with spaces to a multiple of 8. The same inputs always give the same bytes.
// `file` only names the output in errors. Throws on duplicate names or size/shape mismatches.
std::vector<uint8_t> serialize_safetensors(const std::vector<TensorView>& tensors,
                                           const Metadata& metadata = {},
                                           const std::string& file = "<memory>");

// Writes the same bytes as serialize_safetensors to `path`, streaming through a temporary file
// in the same folder that is fsynced and renamed, so readers never see a partial file.
void write_safetensors(const std::string& path, const std::vector<TensorView>& tensors,
                       const Metadata& metadata = {});

// Sharded checkpoints in the Hugging Face layout: `<prefix>-00001-of-0000K.safetensors` and
// `<prefix>.safetensors.index.json` = {"metadata": {"total_size": N, ...}, "weight_map": {...}}.
struct ShardOptions {
  uint64_t max_shard_bytes = 16ull << 20;  // a larger single tensor gets a shard of its own
  std::string prefix = "model";
};

// Writes the shards (tensors packed in name order) then the index, the index last so a reader
// never sees an index naming shards not yet written; stale shards of the same prefix from an
// earlier write are removed. Returns the shard file names. `metadata` goes into every shard's
// `__metadata__` and into the index's "metadata" next to total_size.
std::vector<std::string> write_sharded_checkpoint(const std::string& directory,
                                                  const std::vector<TensorView>& tensors,
                                                  const Metadata& metadata = {},
                                                  const ShardOptions& options = {});

// A checkpoint opened from a .safetensors file, or a directory holding an index
// (`*.safetensors.index.json`, exactly one) or exactly one .safetensors file.
class Checkpoint {
 public:
  static Checkpoint open(const std::string& path);

  const std::string& path() const { return path_; }
  const std::string& index_path() const { return index_path_; }  // "" without an index
  const std::vector<SafetensorsFile>& files() const { return files_; }
  // Every tensor across the files, sorted by name.
  const std::vector<const TensorView*>& tensors() const { return tensors_; }
  // The index's "metadata" (total_size as a string) or the single file's `__metadata__`.
  const Metadata& metadata() const { return metadata_; }
  uint64_t total_bytes() const;

  const TensorView* find(std::string_view name) const;
  const TensorView& at(std::string_view name) const;  // throws naming checkpoint and tensor

 private:
  Checkpoint() = default;
  void collect_tensors();

  std::string path_;
  std::string index_path_;
  std::vector<SafetensorsFile> files_;
  std::vector<const TensorView*> tensors_;
  Metadata metadata_;
};

// Index of the first NaN or infinity in a F64/F32/F16/BF16 tensor (nullopt when all finite or
// when the dtype is not floating).
std::optional<int64_t> find_non_finite(const TensorView& tensor);
// Throw wc::Error "<file>: tensor '<name>': NaN at index i" for the first non-finite value.
void check_finite(const TensorView& tensor);
void check_finite(const Checkpoint& checkpoint);

// What a model expects to find in its weights (produced from the world-model config).
struct TensorSpec {
  std::string name;
  Shape shape;
  Dtype dtype = Dtype::kF32;
};

// Every disagreement between a checkpoint and the spec list, one line each, naming the file and
// tensor: missing tensors, unknown extra tensors, wrong shape, wrong dtype. Empty when it fits.
std::vector<std::string> find_spec_mismatches(const Checkpoint& checkpoint,
                                              const std::vector<TensorSpec>& specs);
// Throws wc::Error with the first mismatch (and how many more there are).
void check_spec(const Checkpoint& checkpoint, const std::vector<TensorSpec>& specs);

}  // namespace wc
