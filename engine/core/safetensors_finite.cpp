// NaN / infinity detection in floating tensors, read straight from the (possibly unaligned) bytes.
#include <cstring>

#include "engine/core/error.h"
#include "engine/core/safetensors.h"
#include "engine/core/safetensors_internal.h"

namespace wc {
namespace {

// IEEE layouts: a value is NaN or infinite exactly when all exponent bits are set, so testing the
// bits is the same as decoding to float and calling std::isfinite, and needs no f16/bf16 decoder.
template <typename Bits>
std::optional<int64_t> first_all_ones_exponent(const TensorView& tensor, Bits exponent_mask) {
  const int64_t count = static_cast<int64_t>(tensor.byte_size / sizeof(Bits));
  for (int64_t i = 0; i < count; ++i) {
    Bits bits;
    std::memcpy(&bits, tensor.data + i * static_cast<int64_t>(sizeof(Bits)), sizeof(Bits));
    if ((bits & exponent_mask) == exponent_mask) return i;
  }
  return std::nullopt;
}

// Given a value whose exponent bits are all set: NaN when any mantissa bit is set, else infinity.
template <typename Bits>
bool is_nan_at(const TensorView& tensor, int64_t index, Bits mantissa_mask) {
  Bits bits;
  std::memcpy(&bits, tensor.data + index * static_cast<int64_t>(sizeof(Bits)), sizeof(Bits));
  return (bits & mantissa_mask) != 0;
}

// The row-major position of a flat index: 5 in shape [2, 3] is [1, 2].
std::string element_position(const Shape& shape, int64_t flat) {
  Shape position(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0) return "[]";
    position[d] = flat % shape[d];
    flat /= shape[d];
  }
  return shape_to_string(position);
}

}  // namespace

std::optional<int64_t> find_non_finite(const TensorView& tensor) {
  switch (tensor.dtype) {
    case Dtype::kF64:
      return first_all_ones_exponent<uint64_t>(tensor, 0x7ff0000000000000ull);
    case Dtype::kF32:
      return first_all_ones_exponent<uint32_t>(tensor, 0x7f800000u);
    case Dtype::kF16:
      return first_all_ones_exponent<uint16_t>(tensor, 0x7c00u);
    case Dtype::kBF16:
      return first_all_ones_exponent<uint16_t>(tensor, 0x7f80u);
    default:
      return std::nullopt;
  }
}

void check_finite(const TensorView& tensor) {
  const auto index = find_non_finite(tensor);
  if (!index) return;
  bool nan = false;
  switch (tensor.dtype) {
    case Dtype::kF64:
      nan = is_nan_at<uint64_t>(tensor, *index, 0x000fffffffffffffull);
      break;
    case Dtype::kF32:
      nan = is_nan_at<uint32_t>(tensor, *index, 0x007fffffu);
      break;
    case Dtype::kF16:
      nan = is_nan_at<uint16_t>(tensor, *index, 0x03ffu);
      break;
    default:
      nan = is_nan_at<uint16_t>(tensor, *index, 0x007fu);
      break;
  }
  throw Error(tensor.file, "tensor " + quoted_name(tensor.name) + ": " +
                               (nan ? "NaN" : "infinity") + " at index " + std::to_string(*index) +
                               " (element " + element_position(tensor.shape, *index) + ")");
}

void check_finite(const Checkpoint& checkpoint) {
  for (const TensorView* tensor : checkpoint.tensors()) check_finite(*tensor);
}

}  // namespace wc
