// See safetensors_torch.h. Uses only ATen calls present in both LibTorch 1.13 and 2.x.
#include "engine/core/safetensors_torch.h"

#include <cstring>

#include "engine/core/error.h"

namespace wc {
namespace {

// The views into contiguous CPU copies, which must stay alive while the views are written.
struct PreparedTensors {
  std::vector<at::Tensor> keep_alive;
  std::vector<TensorView> views;
};

PreparedTensors prepare(const TensorMap& tensors, const std::string& where) {
  PreparedTensors prepared;
  for (const auto& [name, tensor] : tensors) {
    if (!tensor.defined()) throw Error(where, "tensor '" + name + "' is undefined");
    TensorView view;
    view.name = name;
    view.dtype = dtype_from_scalar_type(tensor.scalar_type(), where + ": tensor '" + name + "'");
    const at::Tensor host = tensor.to(at::kCPU).contiguous();
    view.shape.assign(host.sizes().begin(), host.sizes().end());
    view.data = static_cast<const uint8_t*>(host.data_ptr());
    view.byte_size = static_cast<size_t>(host.numel()) * host.element_size();
    prepared.keep_alive.push_back(host);
    prepared.views.push_back(std::move(view));
  }
  return prepared;
}

}  // namespace

at::ScalarType to_scalar_type(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF64:
      return at::kDouble;
    case Dtype::kF32:
      return at::kFloat;
    case Dtype::kF16:
      return at::kHalf;
    case Dtype::kBF16:
      return at::kBFloat16;
    case Dtype::kI64:
      return at::kLong;
    case Dtype::kI32:
      return at::kInt;
    case Dtype::kI16:
      return at::kShort;
    case Dtype::kI8:
      return at::kChar;
    case Dtype::kU8:
      return at::kByte;
    case Dtype::kBool:
      return at::kBool;
  }
  return at::kFloat;  // unreachable: the switch covers every Dtype
}

Dtype dtype_from_scalar_type(at::ScalarType type, const std::string& where) {
  switch (type) {
    case at::kDouble:
      return Dtype::kF64;
    case at::kFloat:
      return Dtype::kF32;
    case at::kHalf:
      return Dtype::kF16;
    case at::kBFloat16:
      return Dtype::kBF16;
    case at::kLong:
      return Dtype::kI64;
    case at::kInt:
      return Dtype::kI32;
    case at::kShort:
      return Dtype::kI16;
    case at::kChar:
      return Dtype::kI8;
    case at::kByte:
      return Dtype::kU8;
    case at::kBool:
      return Dtype::kBool;
    default:
      throw Error(where, std::string("dtype ") + c10::toString(type) +
                             " cannot be stored in safetensors here");
  }
}

at::Tensor to_tensor(const TensorView& view) {
  if (view.dtype == Dtype::kBool) {
    for (size_t i = 0; i < view.byte_size; ++i) {
      if (view.data[i] > 1) {
        throw Error(view.file, "tensor '" + view.name + "': BOOL byte " +
                                   std::to_string(view.data[i]) + " at index " + std::to_string(i) +
                                   " is neither 0 nor 1");
      }
    }
  }
  at::Tensor tensor =
      at::empty(at::IntArrayRef(view.shape), at::TensorOptions().dtype(to_scalar_type(view.dtype)));
  if (view.byte_size > 0) std::memcpy(tensor.data_ptr(), view.data, view.byte_size);
  return tensor;
}

TensorMap load_tensors(const Checkpoint& checkpoint) {
  TensorMap tensors;
  for (const TensorView* view : checkpoint.tensors()) tensors.emplace(view->name, to_tensor(*view));
  return tensors;
}

void write_safetensors(const std::string& path, const TensorMap& tensors,
                       const Metadata& metadata) {
  const PreparedTensors prepared = prepare(tensors, path);
  write_safetensors(path, prepared.views, metadata);
}

std::vector<std::string> write_sharded_checkpoint(const std::string& directory,
                                                  const TensorMap& tensors,
                                                  const Metadata& metadata,
                                                  const ShardOptions& options) {
  const PreparedTensors prepared = prepare(tensors, directory);
  return write_sharded_checkpoint(directory, prepared.views, metadata, options);
}

}  // namespace wc
