// Dtype names and sizes, and shape arithmetic shared by the safetensors reader and writer.
#include <array>

#include "engine/core/safetensors.h"

namespace wc {
namespace {

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;
  size_t size;
  bool floating;
};

constexpr std::array<DtypeInfo, 10> kDtypes = {{
    {Dtype::kF64, "F64", 8, true},
    {Dtype::kF32, "F32", 4, true},
    {Dtype::kF16, "F16", 2, true},
    {Dtype::kBF16, "BF16", 2, true},
    {Dtype::kI64, "I64", 8, false},
    {Dtype::kI32, "I32", 4, false},
    {Dtype::kI16, "I16", 2, false},
    {Dtype::kI8, "I8", 1, false},
    {Dtype::kU8, "U8", 1, false},
    {Dtype::kBool, "BOOL", 1, false},
}};

const DtypeInfo& info(Dtype dtype) {
  return kDtypes[static_cast<size_t>(dtype)];
}

}  // namespace

std::string_view dtype_name(Dtype dtype) {
  return info(dtype).name;
}
size_t dtype_size(Dtype dtype) {
  return info(dtype).size;
}
bool is_floating(Dtype dtype) {
  return info(dtype).floating;
}

std::optional<Dtype> dtype_from_name(std::string_view name) {
  for (const DtypeInfo& entry : kDtypes) {
    if (entry.name == name) return entry.dtype;
  }
  return std::nullopt;
}

std::optional<int64_t> shape_numel(const Shape& shape) {
  int64_t numel = 1;
  for (const int64_t dim : shape) {
    if (dim < 0 || __builtin_mul_overflow(numel, dim, &numel)) return std::nullopt;
  }
  return numel;
}

std::string shape_to_string(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

int64_t TensorView::numel() const {
  return shape_numel(shape).value_or(-1);
}

}  // namespace wc
